// swift-format-ignore-file
// (The thinking part of the contract snippet below is kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The thinking part of the contract snippet, byte for byte: it compiles as written.
/// Its model file is not on this machine, so it runs to `modelNotReady`; the same lines
/// with the tiny thinking model's path (scripts/make-thinking-models.py) behave as the
/// snippet says: the reasoning arrives as thought parts, never in `content`.
final class ThinkingContractSnippetTests: XCTestCase {
  func testTheThinkingPartCompilesAndNeedsItsModelFile() async throws {
    do {
      try await thinkingSnippet()
      XCTFail("the snippet's model file is not on this machine")
    } catch HybridInferenceError.unavailable(_, .modelNotReady) {
    }
  }

  func testTheSameLinesOnTheTinyThinkingModel_keepThoughtsOutOfContent() async throws {
    let directory = try GeneratedFiles.thinkingModels.get().directory
    let thinker = LocalSystemModel(modelPath: directory + "/opened.gguf", contextSize: 512, threads: 2)
    let solved = try await GenerativeModelSession(model: thinker).respond(
      to: "Is 1001 prime?",
      options: .foundationModels(
        GenerationOptions(sampling: .greedy, maximumResponseTokens: 48, reasoning: .budget(tokens: 8))))
    XCTAssertFalse(solved.rawResponse.thoughtText.isEmpty)
    XCTAssertFalse(solved.content.contains("</think>"))
    XCTAssertGreaterThanOrEqual(solved.rawResponse.usageMetadata?.thoughtsTokenCount ?? 0, 8)
  }
}

private func thinkingSnippet() async throws {
  // ---- the contract snippet's thinking part, verbatim ----

// Models that think (Qwen3, DeepSeek-R1 distills, SmolLM3, gpt-oss, ...): the reasoning arrives
// as thought parts, never in `content`; the device option says how much thinking is allowed.
let thinker = LocalSystemModel(modelPath: "/models/Qwen3-0.6B-Q8_0.gguf")
let solved = try await GenerativeModelSession(model: thinker).respond(
  to: "Is 1001 prime?",
  options: .foundationModels(GenerationOptions(reasoning: .budget(tokens: 256))))
print(solved.content, solved.rawResponse.thoughtText)
_ = [GenerationOptions.Reasoning.off, .light, .moderate, .deep, .budget(tokens: 64)]

  // ---- end of the snippet's thinking part ----
}
