import Foundation
import HybridInference
import XCTest

/// Bounded memory (issue 9, point 6): a unary body and a single stream event
/// have a size limit, and passing it ends the call with `.responseTooLarge`
/// at once, even when the body would never end.
final class CloudBodyLimitTests: CloudTestCase {
  private func options(
    response: Int = RequestOptions.defaultMaximumResponseBytes,
    event: Int = RequestOptions.defaultMaximumEventBytes
  ) -> RequestOptions {
    var options = RequestOptions.fastTests
    options.retryPolicy = .none
    options.maximumResponseBytes = response
    options.maximumEventBytes = event
    return options
  }

  private func assertTooLarge(
    _ error: (any Error)?, limit: Int, file: StaticString = #filePath, line: UInt = #line
  ) {
    guard case .responseTooLarge(let reported)? = error as? HybridInferenceError else {
      return XCTFail("expected responseTooLarge, got \(String(describing: error))", file: file, line: line)
    }
    XCTAssertEqual(reported, limit, file: file, line: line)
  }

  func testBodiesUnderTheDefaultLimits_arrive() async throws {
    let size = 3_000_000
    let unary = try await session("fault-huge~size-\(size)", requestOptions: options()).respond(to: "big")
    XCTAssertEqual(unary.content.utf8.count, size)
    let streamed = await collectSnapshots(
      session("fault-huge~size-\(size)", requestOptions: options()).streamResponse(to: "big"))
    XCTAssertNil(streamed.error)
    XCTAssertEqual(streamed.snapshots.last?.content.utf8.count, size)
  }

  func testUnaryBodyOverTheLimit_isResponseTooLarge() async throws {
    let session = self.session("fault-huge~size-3000000", requestOptions: options(response: 1 << 20))
    assertTooLarge(await captureError { try await session.respond(to: "big") }, limit: 1 << 20)
  }

  func testStreamEventOverTheLimit_isResponseTooLarge() async throws {
    // The whole-body limit does not apply to a stream; the event limit does.
    let session = self.session("fault-huge~size-3000000", requestOptions: options(response: 1 << 10, event: 1 << 20))
    let result = await collectSnapshots(session.streamResponse(to: "big"))
    XCTAssertTrue(result.snapshots.isEmpty)
    assertTooLarge(result.error, limit: 1 << 20)
  }

  /// A 200 whose body never ends stops at the limit, not at the deadline
  /// (which would be `.timedOut`, 20 s later).
  func testEndlessBody_endsWithResponseTooLarge() async throws {
    let limit = 256 << 10
    let unaryModel = "fault-endless~" + uniqueID()
    let unary = self.session(unaryModel, requestOptions: options(response: limit))
    assertTooLarge(await captureError { try await unary.respond(to: "never ends") }, limit: limit)
    try await assertServerStopsWriting(unaryModel)
    let streamedModel = "fault-endless~" + uniqueID()
    let streamed = self.session(streamedModel, requestOptions: options(event: limit))
    assertTooLarge(await collectSnapshots(streamed.streamResponse(to: "never ends")).error, limit: limit)
    try await assertServerStopsWriting(streamedModel)
  }

  /// A call that gave up also hung up: the server's write fails within a
  /// moment, rather than the body going on into a connection nobody reads.
  private func assertServerStopsWriting(_ model: String, line: UInt = #line) async throws {
    let deadline = ContinuousClock.now + .seconds(3)
    var writing = try await server.endlessBodiesBeingWritten(model)
    while writing != 0 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(50))
      writing = try await server.endlessBodiesBeingWritten(model)
    }
    XCTAssertEqual(writing, 0, "the server still writes the body of a call that ended", line: line)
  }

  /// A bare `{"error": ...}` line is read even inside an event that also has
  /// a `data:` line; before, the data was used and the error dropped.
  func testErrorLineInsideAnEventWithData_isThrown() async throws {
    let session = self.session("fault-stream-error-inline", requestOptions: options())
    let result = await collectSnapshots(session.streamResponse(to: "hello there friend"))
    let apiError = cloudAPIError(result.error)
    XCTAssertEqual(apiError?.httpStatus, 503)
    XCTAssertEqual(apiError?.status, "UNAVAILABLE")
    XCTAssertEqual(result.snapshots.count, 1, "the event before the error was delivered")
  }
}
