import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// The tiny random-weight model with thinking templates
/// (scripts/make-thinking-models.py), end to end: the block the generation
/// prompt opens never closes in random text, so all of it is thought.
final class ThinkingModelTests: XCTestCase {
  private func model(_ kind: String) throws -> LocalSystemModel {
    let directory = try GeneratedFiles.thinkingModels.get().directory
    return LocalSystemModel(modelPath: directory + "/\(kind).gguf", contextSize: 512, threads: 2)
  }

  private func options(_ reasoning: GenerationOptions.Reasoning? = nil) -> HybridGenerationOptions {
    .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 12, reasoning: reasoning))
  }

  func testABlockOpenAtTheTokenLimit_isAllThought_andItsTokensCounted() async throws {
    let session = GenerativeModelSession(model: try model("opened"), logHandler: .silent)
    let answer = try await session.respond(to: "Is 1001 prime?", options: options())
    XCTAssertEqual(answer.content, "")
    XCTAssertFalse(answer.rawResponse.thoughtText.isEmpty)
    XCTAssertEqual(answer.rawResponse.candidates.first?.finishReason, .maxTokens)
    let usage = try XCTUnwrap(answer.rawResponse.usageMetadata)
    XCTAssertEqual(usage.thoughtsTokenCount, 12)
    XCTAssertEqual(usage.candidatesTokenCount, 0)
    XCTAssertEqual(usage.totalTokenCount, (usage.promptTokenCount ?? 0) + 12)
    // The thought stays in the transcript, marked as thought.
    let entry = try XCTUnwrap(session.transcript.entries.last)
    XCTAssertEqual(entry.content.thoughtText, answer.rawResponse.thoughtText)
    XCTAssertEqual(entry.content.text, "")
  }

  func testStreamedThoughts_arriveAsThoughtPartsOnly() async throws {
    let session = GenerativeModelSession(model: try model("opened"), logHandler: .silent)
    var thoughts = ""
    for try await snapshot in session.streamResponse(to: "Is 1001 prime?", options: options()) {
      XCTAssertEqual(snapshot.content, "")
      thoughts = snapshot.rawResponse.thoughtText
    }
    XCTAssertFalse(thoughts.isEmpty)
  }

  func testOff_closesTheBlockTheTemplateOpens_whetherOrNotItHasASwitch() async throws {
    for kind in ["opened", "switchable"] {
      let answer = try await GenerativeModelSession(model: try model(kind), logHandler: .silent)
        .respond(to: "Is 1001 prime?", options: options(.off))
      XCTAssertEqual(answer.rawResponse.thoughtText, "", kind)
      XCTAssertEqual(answer.rawResponse.usageMetadata?.thoughtsTokenCount, 0, kind)
      XCTAssertEqual(answer.rawResponse.usageMetadata?.candidatesTokenCount, 12, kind)
      XCTAssertFalse(answer.content.isEmpty, kind)
    }
  }

  func testAModelWithoutThinking_hasNoThoughtCount() async throws {
    let answer = try await GenerativeModelSession(model: try LocalTestModels.tiny(), logHandler: .silent)
      .respond(to: "Hi", options: options(.budget(tokens: 4)))
    XCTAssertNil(answer.rawResponse.usageMetadata?.thoughtsTokenCount)
    XCTAssertEqual(answer.rawResponse.thoughtText, "")
  }
}
