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

  func testBudget_closesTheBlockAfterThatManyTokens_andTheAnswerFollows() async throws {
    let thinker = try model("opened")
    let budgeted = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 32, reasoning: .budget(tokens: 3)))
    let answer = try await GenerativeModelSession(model: thinker, logHandler: .silent)
      .respond(to: "Is 1001 prime?", options: budgeted)
    // The end tag's tokens up to the one that completes it are thought too.
    let loaded = try await thinker.loadedModel(progress: nil)
    let closing = try loaded.tokenize("\n</think>\n\n", addSpecial: false, parseSpecial: true)
    var written = ""
    let tagTokens =
      try XCTUnwrap(
        closing.indices.first { index in
          written += String(decoding: loaded.piece(of: closing[index]), as: UTF8.self)
          return written.contains("</think>")
        }) + 1
    let usage = try XCTUnwrap(answer.rawResponse.usageMetadata)
    XCTAssertEqual(usage.thoughtsTokenCount, 3 + tagTokens)
    XCTAssertEqual((usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0), 32)
    XCTAssertFalse(answer.rawResponse.thoughtText.isEmpty)
    XCTAssertFalse(answer.rawResponse.thoughtText.contains("</think>"))
    XCTAssertFalse(answer.content.isEmpty)
    XCTAssertFalse(answer.content.contains("</think>"))
  }

  func testBudgetWithoutRoomForTheEndTag_leavesTheBlockOpenToTheLimit() async throws {
    let answer = try await GenerativeModelSession(model: try model("opened"), logHandler: .silent)
      .respond(to: "Is 1001 prime?", options: options(.budget(tokens: 11)))
    XCTAssertEqual(answer.content, "")
    XCTAssertEqual(answer.rawResponse.usageMetadata?.thoughtsTokenCount, 12)
    XCTAssertEqual(answer.rawResponse.usageMetadata?.candidatesTokenCount, 0)
  }
}
