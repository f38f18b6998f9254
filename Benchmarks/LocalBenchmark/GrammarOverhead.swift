import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Decode speed with and without a response schema (the goal: the grammar
/// costs under 15%; "Structured output overhead"): the same prompt, greedy,
/// the same number of tokens, on one warm context.
///
/// The schema asks for a string longer than the token limit, so the
/// constrained run, like the free one, stops at the limit inside the string
/// (its answer is then incomplete JSON, which the check refuses at the end:
/// that error is expected and ignored here).
enum GrammarOverhead {
  static let prompt = "Write a long essay about the history of the Roman Empire."
  static let storage = SessionStorage()

  /// Tokens per second from the first piece of text to the last, and how
  /// many pieces came after the first.
  static func decode(model: LocalSystemModel, tokens: Int, constrained: Bool) async throws -> (Double, Int) {
    var request = ModelRequest(
      transcript: Transcript(entries: [.prompt(prompt)]),
      options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens)),
      sessionStorage: storage)
    if constrained {
      request.responseSchema = try GenerationSchema(
        jsonSchema: #"{"type":"object","properties":{"essay":{"type":"string","minLength":1500}},"required":["essay"]}"#
      )
    }
    var first: ContinuousClock.Instant?
    var last = ContinuousClock.now
    var pieces = 0
    do {
      for try await delta in model.streamResponse(to: request) where !delta.text.isEmpty {
        if first == nil { first = .now } else { pieces += 1 }
        last = .now
      }
    } catch HybridInferenceError.invalidStructuredOutput where constrained {
      // Expected: the limit cut the essay's string.
    }
    guard let first, pieces > 0 else { return (.nan, pieces) }
    return (Double(pieces) / (last - first).seconds, pieces)
  }
}
