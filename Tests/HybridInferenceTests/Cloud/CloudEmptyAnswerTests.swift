import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Empty answers (issue 9, point 5), replayed from the repository's own
/// recorded-style fixtures (Tests/Fixtures/gemini/googleai) through the
/// loopback server, unary and streamed.
///
/// The rule follows the Firebase SDK: a candidate with no parts, no finish
/// reason and no metadata is no answer at all (`malformedResponse`); with a
/// finish reason it is a real, empty answer. Empty chunks between text chunks
/// are fine. An empty answer is recorded, and never sent back. An answer with
/// text and no finish reason (as Vertex AI ends its streams) is an answer:
/// what is missing is content, not a finish reason.
final class CloudEmptyAnswerTests: CloudTestCase {
  /// What a replay must end with: nil for success with `text`, or a check of the error.
  private struct Outcome {
    var text: String?
    var error: (@Sendable (any Error) -> String?)?
  }

  private static let outcomes: [String: Outcome] = [
    "unary-success-max-tokens-no-parts.json": Outcome(text: ""),
    "unary-failure-empty-content.json": Outcome(error: malformed),
    "unary-failure-no-parts-no-finish-reason.json": Outcome(error: malformed),
    "unary-failure-unknown-finish-reason.json": Outcome(error: stopped(text: "Let me look that up")),
    "unary-success-no-finish-reason.json": Outcome(text: "Mountains rise where the plates meet."),
    "streaming-success-max-tokens-no-parts.txt": Outcome(text: ""),
    "streaming-success-empty-chunks-between-text.txt": Outcome(text: "The sky is blue."),
    "streaming-failure-empty-content.txt": Outcome(error: malformed),
    "streaming-failure-no-parts-no-finish-reason.txt": Outcome(error: malformed),
    "streaming-failure-unknown-finish-reason.txt": Outcome(error: stopped(text: "Let me look that up")),
    "streaming-success-no-finish-reason.txt": Outcome(text: "Mountains rise where the plates meet."),
  ]

  private static let malformed: @Sendable (any Error) -> String? = { error in
    guard case .malformedResponse? = error as? HybridInferenceError else {
      return "expected malformedResponse, got \(error)"
    }
    return nil
  }

  private static func stopped(text: String) -> @Sendable (any Error) -> String? {
    { error in
      guard case .responseStopped(let reason, let response)? = error as? HybridInferenceError else {
        return "expected responseStopped, got \(error)"
      }
      if reason.rawValue != "UNEXPECTED_TOOL_CALL" { return "raw reason \(reason.rawValue)" }
      return response.text == text ? nil : "text \(response.text)"
    }
  }

  func testOwnFixtures_replayUnaryAndStreamed() async throws {
    let folder = GeminiTestServer.repositoryRoot.appendingPathComponent("Tests/Fixtures/gemini/googleai")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    XCTAssertEqual(Set(files), Set(Self.outcomes.keys), "every own fixture has an expected outcome")
    for file in files {
      let outcome = try XCTUnwrap(Self.outcomes[file])
      // Unary files go through both endpoints (streamed, the server sends them as one event).
      for streamed in file.hasPrefix("unary-") ? [false, true] : [true] {
        let label = "\(file) \(streamed ? "streamed" : "unary")"
        let session = self.session("fixture-\(file)", requestOptions: RequestOptions(retryPolicy: .none))
        var text: String?
        var failure: (any Error)?
        if streamed {
          let result = await collectSnapshots(session.streamResponse(to: "Hello"))
          failure = result.error
          text = result.error == nil ? (result.snapshots.last?.content ?? "") : nil
        } else {
          do {
            text = try await session.respond(to: "Hello").content
          } catch {
            failure = error
          }
        }
        if let check = outcome.error {
          let error = try XCTUnwrap(failure, "\(label) must fail")
          if let problem = check(error) { XCTFail("\(label): \(problem)") }
          XCTAssertTrue(session.transcript.entries.isEmpty, "\(label): a failure is not recorded")
        } else {
          XCTAssertNil(failure, "\(label): \(String(describing: failure))")
          XCTAssertEqual(text, outcome.text, label)
          XCTAssertEqual(session.transcript.entries.count, 2, "\(label): the answer is recorded")
        }
      }
    }
  }

  /// A thinking model cut off at MAX_TOKENS answers `{"role": "model"}`; the
  /// next turn must not send it back as `{"role":"model","parts":[]}` (which
  /// Gemini, and the loopback server, refuse with 400).
  func testEmptyAnswer_isRecordedButNeverSentBack() async throws {
    for streamed in [false, true] {
      let model = "fixture-unary-success-max-tokens-no-parts~\(uniqueID())"
      let session = self.session(model, requestOptions: RequestOptions(retryPolicy: .none))
      for prompt in ["first", "second", "third"] {
        if streamed {
          let result = await collectSnapshots(session.streamResponse(to: prompt))
          XCTAssertNil(result.error, "\(prompt): \(String(describing: result.error))")
        } else {
          _ = try await session.respond(to: prompt)
        }
      }
      XCTAssertEqual(session.transcript.entries.map(\.role), [.user, .model, .user, .model, .user, .model])
      let last = try await server.lastRequest(model)
      let body = try XCTUnwrap(last["body"] as? [String: Any])
      let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
      XCTAssertEqual(contents.map { $0["role"] as? String }, ["user", "user", "user"])
      for content in contents {
        let parts = try XCTUnwrap(content["parts"] as? [[String: Any]])
        XCTAssertFalse(parts.isEmpty)
      }
    }
  }

  func testEncoder_dropsBlankPartsAndEmptyTurns_keepsSignatures() throws {
    let signed = Part(text: "", thoughtSignature: "c2lnbmF0dXJl")
    let transcript = Transcript(entries: [
      .prompt("one"),
      .response(Content(parts: []), modelVersion: "m"),
      .prompt("two"),
      .response(Content(text: ""), modelVersion: "m"),
      .prompt("three"),
      .response(Content(parts: [Part(text: ""), Part(thought: true), signed, Part(text: "hi")]), modelVersion: "m"),
      .prompt("four"),
    ])
    let request = GenerateContentRequest(transcript: transcript, generationConfig: nil, safetySettings: nil)
    XCTAssertEqual(request.contents.map(\.role), ["user", "user", "user", "model", "user"])
    XCTAssertEqual(request.contents[3].parts, [signed, Part(text: "hi")])
    let count = CountTokensRequest(transcript: transcript, modelPath: "models/m")
    XCTAssertEqual(count.contents?.count, 5, "countTokens sends the same turns")
  }
}
