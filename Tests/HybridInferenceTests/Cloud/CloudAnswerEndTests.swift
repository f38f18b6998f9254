import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceRemote

/// Whether a Gemini answer is whole is decided by how its body ended, not by
/// its finish reason: Vertex AI ends streams without one, and Firebase reads
/// them as answers.
///
/// A body that ended where its framing says (its last chunk, its whole
/// Content-Length, a clean close of a body delimited by the close) is the
/// answer, with a nil finish reason, streamed or unary. A body cut at the
/// transport (closed before its last chunk or short of its Content-Length,
/// or reset) is `.connectionLost`, with the text before the cut already
/// delivered when streamed; neither retried (the server ran the request) nor
/// a fallback under prefer-cloud (it was reached). The loopback server's
/// `fault-unfinished` sends each framing (Tests/GeminiServer).
class CloudAnswerEndTests: CloudTestCase {
  private static let prompt = "hello there"
  private static let answer = "echo: hello there"

  func testWholeBodiesWithoutAFinishReason_areAnswers_streamedAndUnary() async throws {
    for framing in ["chunked", "length", "close"] {
      for streamed in [true, false] {
        let label = "\(framing) \(streamed ? "streamed" : "unary")"
        let name = "fault-unfinished~body-\(framing)~\(uniqueID())"
        let session = self.session(name)
        let content: String?
        let raw: GenerateContentResponse?
        if streamed {
          let result = await collectSnapshots(session.streamResponse(to: Self.prompt))
          XCTAssertNil(result.error, "\(label): \(String(describing: result.error))")
          XCTAssertEqual(result.snapshots.map(\.content), ["echo:", "echo: hell", Self.answer], label)
          (content, raw) = (result.snapshots.last?.content, result.snapshots.last?.rawResponse)
        } else {
          let response = try await session.respond(to: Self.prompt)
          (content, raw) = (response.content, response.rawResponse)
        }
        XCTAssertEqual(content, Self.answer, label)
        XCTAssertNotNil(raw, label)
        XCTAssertNil(raw?.finishReason, "\(label): the finish reason stays nil")
        XCTAssertEqual(session.transcript.entries.count, 2, "\(label): the answer is recorded")
        let count = try await server.requestCount(name)
        XCTAssertEqual(count, 1, label)
      }
    }
  }

  func testBodiesCutAtTheTransport_areConnectionLost_streamedAndUnary() async throws {
    for framing in ["chunked-cut", "length-cut", "reset"] {
      for streamed in [true, false] {
        let label = "\(framing) \(streamed ? "streamed" : "unary")"
        let name = "fault-unfinished~body-\(framing)~\(uniqueID())"
        let session = self.session(name)
        let error: (any Error)?
        if streamed {
          let result = await collectSnapshots(session.streamResponse(to: Self.prompt))
          XCTAssertEqual(result.snapshots.map(\.content), ["echo:", "echo: hell"], "\(label): the text before the cut")
          error = result.error
        } else {
          error = await captureError { try await session.respond(to: Self.prompt) }
        }
        XCTAssertEqual(connectionLostError(error)?.code, .networkConnectionLost, label)
        XCTAssertTrue(session.transcript.entries.isEmpty, "\(label): a cut answer is not recorded")
        let count = try await server.requestCount(name)
        XCTAssertEqual(count, 1, "\(label): not retried, the server ran the request")
      }
    }
  }

  func testPreferCloud_aCutStreamDoesNotFallBack_beforeOrAfterText() async throws {
    // After text: the error ends the stream, as every failure after text does.
    // Before text (a 200 whose body is cut before any event): the server was
    // reached and ran the request; that is not being offline either.
    for (fault, delivered) in [("body-chunked-cut", 2), ("body-chunked-cut~events-0", 0)] {
      let name = "fault-unfinished~\(fault)~\(uniqueID())"
      let local = ScriptedModel("local", placement: .onDevice)
      let logs = CloudLogRecorder()
      let session = GenerativeModelSession(
        model: .hybridModel(primary: server.model(name), secondary: local),
        logHandler: logs.handler)
      let result = await collectSnapshots(session.streamResponse(to: Self.prompt))
      XCTAssertEqual(result.snapshots.count, delivered, fault)
      XCTAssertEqual(connectionLostError(result.error)?.code, .networkConnectionLost, fault)
      XCTAssertTrue(local.requests.isEmpty, "\(fault): no fallback")
      XCTAssertTrue(logs.records.allSatisfy { $0.fallback == nil }, fault)
      let count = try await server.requestCount(name)
      XCTAssertEqual(count, 1, fault)
    }
  }
}
