import HybridInference

/// The transport tests that drop, stall, redirect, cut, cancel and stream,
/// run again through URLSession (`RequestOptions.Transport.urlSession`): the
/// plain-http loopback servers otherwise only exercise the library's own
/// HTTP/1.1 client, and URLSession still carries every https request.
///
/// Each class inherits every test of its base and changes only `transport`.
/// Each also declares one test of its own, and must: XCTest's discovery on
/// Linux (SwiftPM reads the index) lists a subclass's inherited tests only
/// when it declares a test itself, and drops the class otherwise.
/// scripts/check-transport-twins.sh (part of `make test`) fails when a
/// base's test is not listed for its URLSession class too.

final class CloudStreamingURLSessionTests: CloudStreamingTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}

final class CloudRetryURLSessionTests: CloudRetryTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}

final class CloudSlowIsNotOfflineURLSessionTests: CloudSlowIsNotOfflineTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}

final class CloudRedirectURLSessionTests: CloudRedirectTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}

final class CloudOfflineURLSessionTests: CloudOfflineTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}

final class CloudAnswerEndURLSessionTests: CloudAnswerEndTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}

final class CloudStreamSizeURLSessionTests: CloudStreamSizeTests {
  override class var transport: RequestOptions.Transport { .urlSession }
  func testRequestsGoThroughURLSession() async throws { try await assertRequestsGoThroughTheClassTransport() }
}
