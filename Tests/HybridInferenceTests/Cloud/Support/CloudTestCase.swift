import Foundation
import HybridInference
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A test case with its own loopback Gemini server.
class CloudTestCase: XCTestCase {
  var server: GeminiTestServer!

  /// Which HTTP client the class's models use: the library's own for these
  /// plain-http loopback servers; a subclass that says `.urlSession` runs
  /// the same tests through URLSession, so both clients stay covered.
  class var transport: RequestOptions.Transport { .automatic }

  /// `.fastTests` with the class's `transport`.
  var testOptions: RequestOptions {
    var options = RequestOptions.fastTests
    options.transport = type(of: self).transport
    return options
  }

  override func setUp() async throws {
    try await super.setUp()
    server = try GeminiTestServer()
    server.transport = type(of: self).transport
  }

  override func tearDown() async throws {
    server?.stop()
    server = nil
    try await super.tearDown()
  }

  /// Checks that this class's models send through its `transport`, as the
  /// server sees it: URLSession asks for compressed bodies
  /// (`Accept-Encoding`), the library's own HTTP/1.1 client never does.
  func assertRequestsGoThroughTheClassTransport(file: StaticString = #filePath, line: UInt = #line)
    async throws
  {
    let name = "echo~\(uniqueID())"
    _ = try await session(name).respond(to: "which client?")
    let request = try await server.lastRequest(name)
    let headers = try XCTUnwrap(request["headers"] as? [String: String])
    let viaURLSession = headers["accept-encoding"] != nil
    XCTAssertEqual(
      viaURLSession, type(of: self).transport == .urlSession, "\(type(of: self)) sent \(headers)", file: file,
      line: line)
  }

  /// A session on a model of the test server.
  func session(
    _ modelName: String, instructions: String? = nil, requestOptions: RequestOptions = .fastTests,
    logHandler: LogHandler = .silent
  ) -> GenerativeModelSession {
    GenerativeModelSession(
      model: server.model(modelName, requestOptions: requestOptions, logHandler: logHandler),
      instructions: instructions, logHandler: logHandler)
  }
}

/// Runs `body`, which must throw; returns what it threw.
func captureError<T>(
  _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async -> (any Error)? {
  do {
    let value = try await body()
    XCTFail("expected an error, got \(value)", file: file, line: line)
    return nil
  } catch {
    return error
  }
}

/// The `CloudAPIError` inside `error`, or a failure.
func cloudAPIError(
  _ error: (any Error)?, file: StaticString = #filePath, line: UInt = #line
) -> CloudAPIError? {
  guard case .cloudAPI(let apiError)? = error as? HybridInferenceError else {
    XCTFail("expected .cloudAPI, got \(String(describing: error))", file: file, line: line)
    return nil
  }
  return apiError
}

/// The URLError inside an `.offline` error, or a failure.
func offlineError(
  _ error: (any Error)?, file: StaticString = #filePath, line: UInt = #line
) -> URLError? {
  guard case .offline(let urlError)? = error as? HybridInferenceError else {
    XCTFail("expected .offline, got \(String(describing: error))", file: file, line: line)
    return nil
  }
  return urlError
}

/// The URLError inside a `.connectionLost` error, or a failure.
func connectionLostError(
  _ error: (any Error)?, file: StaticString = #filePath, line: UInt = #line
) -> URLError? {
  guard case .connectionLost(let urlError)? = error as? HybridInferenceError else {
    XCTFail("expected .connectionLost, got \(String(describing: error))", file: file, line: line)
    return nil
  }
  return urlError
}

/// Collects a stream's snapshots, and the error that ended it, if any.
func collectSnapshots(_ stream: ResponseStream) async -> (
  snapshots: [ResponseStream.Snapshot], error: (any Error)?
) {
  var snapshots: [ResponseStream.Snapshot] = []
  do {
    for try await snapshot in stream { snapshots.append(snapshot) }
    return (snapshots, nil)
  } catch {
    return (snapshots, error)
  }
}
