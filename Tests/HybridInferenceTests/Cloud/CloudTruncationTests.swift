import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// An answer cut at a clean boundary (a proxy or load balancer that closes
/// early) is an error, never a complete answer (issue 20, point 6).
///
/// Streamed, a Gemini answer is complete only when its candidate has a
/// finish reason: a body that ends cleanly before that is
/// `.responseTruncated`, carrying what arrived. Unary, the body is one JSON
/// document: a body cut short fails to parse or ends short of its
/// Content-Length, and is never an answer. Neither is retried (the server
/// ran the request) nor falls back under prefer-cloud (it was reached).
final class CloudTruncationTests: CloudTestCase {
  func testStreamEndingCleanlyAfterTextWithoutAFinishReason_isResponseTruncated() async throws {
    let name = "fault-cut~\(uniqueID())"
    let session = self.session(name)
    let result = await collectSnapshots(session.streamResponse(to: "hello there"))
    XCTAssertEqual(result.snapshots.map(\.content), ["echo:", "echo: hell"], "the text before the cut")
    guard case .responseTruncated(let response)? = result.error as? HybridInferenceError else {
      return XCTFail("expected .responseTruncated, got \(String(describing: result.error))")
    }
    XCTAssertEqual(response.text, "echo: hell", "what arrived rides along")
    XCTAssertNil(response.finishReason)
    XCTAssertTrue(session.transcript.entries.isEmpty, "a cut answer is not recorded")
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1, "not retried: the server ran the request")
    XCTAssertTrue(
      "\(result.error.map(String.init(describing:)) ?? "")".contains("ended before the answer was complete"))
  }

  func testStreamWithItsFinishReason_isComplete() async throws {
    // The same events, all three: the last carries finishReason STOP.
    let result = await collectSnapshots(session("fault-cut~events-3").streamResponse(to: "hello there"))
    XCTAssertNil(result.error)
    XCTAssertEqual(result.snapshots.last?.content, "echo: hello there")
  }

  func testUnaryBodyCutShortWithACleanClose_isNeverAnAnswer() async throws {
    let name = "fault-cut~\(uniqueID())"
    let session = self.session(name)
    let error = await captureError { try await session.respond(to: "hello there") }
    switch error as? HybridInferenceError {
    case .connectionLost?, .malformedResponse?: break
    default: XCTFail("expected .connectionLost or .malformedResponse, got \(String(describing: error))")
    }
    XCTAssertTrue(session.transcript.entries.isEmpty)
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1, "not retried: the server ran the request")
  }

  func testPreferCloud_aCutStreamDoesNotFallBack_beforeOrAfterText() async throws {
    // After text: the error ends the stream, as every failure after text does.
    // Before text (a 200 whose body ends before any event): the server was
    // reached and ran the request; that is not being offline either.
    for (fault, delivered) in [("fault-cut", 2), ("fault-cut~events-0", 0)] {
      let name = "\(fault)~\(uniqueID())"
      let local = ScriptedModel("local", placement: .onDevice)
      let logs = CloudLogRecorder()
      let session = GenerativeModelSession(
        model: .hybridModel(primary: server.model(name), secondary: local), logHandler: logs.handler)
      let result = await collectSnapshots(session.streamResponse(to: "hello there"))
      XCTAssertEqual(result.snapshots.count, delivered, fault)
      switch result.error as? HybridInferenceError {
      case .responseTruncated? where delivered > 0, .malformedResponse? where delivered == 0: break
      default: XCTFail("\(fault): \(String(describing: result.error))")
      }
      XCTAssertTrue(local.requests.isEmpty, "\(fault): no fallback")
      XCTAssertTrue(logs.records.allSatisfy { $0.fallback == nil }, fault)
      let count = try await server.requestCount(name)
      XCTAssertEqual(count, 1, fault)
    }
  }
}
