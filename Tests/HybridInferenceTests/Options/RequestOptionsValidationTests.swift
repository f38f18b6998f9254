import HybridInference
import XCTest

@testable import HybridInferenceRemote

/// A limit no answer can meet is the options' fault: `invalidOptions`, named,
/// before anything is sent, never `offline` or `responseTooLarge`.
final class RequestOptionsValidationTests: XCTestCase {
  func testEveryLimitOfZeroOrLess_isNamed() {
    XCTAssertNil(RequestOptions().problem)
    let cases: [(String, RequestOptions)] = [
      ("timeout", RequestOptions(timeout: .zero)),
      ("timeout", RequestOptions(timeout: .seconds(-1))),
      ("connectTimeout", RequestOptions(connectTimeout: .zero)),
      ("maximumResponseBytes", RequestOptions(maximumResponseBytes: 0)),
      ("maximumEventBytes", RequestOptions(maximumEventBytes: -1)),
      ("maximumStreamedResponseBytes", RequestOptions(maximumStreamedResponseBytes: 0)),
    ]
    for (name, options) in cases {
      let problem = options.problem ?? ""
      XCTAssertTrue(problem.contains("RequestOptions.\(name) must be > 0"), "\(name): \(problem)")
    }
    XCTAssertNil(RequestOptions(timeout: .nanoseconds(1), connectTimeout: .nanoseconds(1)).problem)
  }

  func testAZeroSizeLimit_refusesTheRequestBeforeItIsSent() async throws {
    let server = try GeminiTestServer()
    defer { server.stop() }
    for streamed in [false, true] {
      var options = RequestOptions.fastTests
      options.maximumResponseBytes = 0
      let model = server.model("echo", requestOptions: options)
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      do {
        _ = streamed ? try await session.streamResponse(to: "Hi").collect() : try await session.respond(to: "Hi")
        XCTFail("answered with a zero size limit (streamed: \(streamed))")
      } catch HybridInferenceError.invalidOptions(let why) {
        XCTAssertTrue(why.contains("maximumResponseBytes"), why)
      }
    }
    let received = try await server.requestCount("echo")
    XCTAssertEqual(received, 0, "nothing is sent")
  }
}
