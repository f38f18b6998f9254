import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// The scheduler's per-token work: a step decodes only what will be sampled.
final class DecodeStepTests: XCTestCase {
  /// An answer cut at `maximumResponseTokens` takes one prefill step and one
  /// decode step per token after the first: the token that reaches the limit
  /// is never decoded (its logits would go unsampled). Before, every such
  /// answer cost one step more (9 steps for 8 tokens), 1.6% of a 64-token turn.
  func testAnAnswerCutAtItsLimit_decodesNoTokenAfterTheLast() async throws {
    for limit in [1, 2, 8] {
      let model = try LocalTestModels.tiny()
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      // A random sampler with a seed and no end-of-generation in reach of the
      // tiny model's random weights: the answer runs to its limit.
      let response = try await session.respond(
        to: "Count to twenty.",
        options: .foundationModels(
          GenerationOptions(sampling: .random(top: 50, seed: 11), maximumResponseTokens: limit)))
      let generated = try XCTUnwrap(response.rawResponse.usageMetadata?.candidatesTokenCount)
      XCTAssertEqual(response.rawResponse.finishReason, .maxTokens, "limit \(limit)")
      XCTAssertEqual(generated, limit)
      let steps = try XCTUnwrap(model.batchedContext?.steps.count)
      XCTAssertEqual(steps, 1 + (limit - 1), "limit \(limit): one prefill step, then one step per later token")
    }
  }

  /// The next turn still reuses the conversation's cache up to what was
  /// decoded, and re-decodes the answer's last token with its own prompt.
  func testTheTurnAfterACutAnswer_reusesTheCache() async throws {
    let model = try LocalTestModels.tiny()
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .random(top: 50, seed: 11), maximumResponseTokens: 6))
    let first = try await session.respond(to: "Count to twenty.", options: options)
    let second = try await session.respond(to: "Go on.", options: options)
    let firstPrompt = try XCTUnwrap(first.rawResponse.usageMetadata?.promptTokenCount)
    let reused = try XCTUnwrap(second.rawResponse.usageMetadata?.cachedContentTokenCount)
    XCTAssertGreaterThanOrEqual(reused, firstPrompt, "the first prompt (and most of its answer) is reused")
  }
}
