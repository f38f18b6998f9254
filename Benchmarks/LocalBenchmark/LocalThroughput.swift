import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Prefill and decode speed of `LocalSystemModel` through its public API, on a
/// warm llama context, like `llama-bench` (which creates its context once).
enum LocalThroughput {
  /// A prompt of about `tokens` tokens once the chat template is applied.
  static func prompt(of tokens: Int, model: LocalSystemModel) async throws -> String {
    var words = Array(repeating: "river", count: tokens)
    while true {
      let text = words.joined(separator: " ")
      let count = try await model.countTokens(
        "<|im_start|>user\n\(text)<|im_end|>\n<|im_start|>assistant\n")
      if count <= tokens || words.isEmpty { return text }
      // The excess in words, at this prompt's tokens per word (more than one in
      // a small vocabulary), halved so that the last steps close in from above.
      let excess = words.count * (count - tokens) / count
      words.removeLast(min(words.count, max(1, excess / 2)))
    }
  }

  /// One session storage for every prefill run and one for every decode
  /// run: each llama context is created once, and the decode context never
  /// holds the long prefill prompt.
  static let storage = SessionStorage()
  static let decodeStorage = SessionStorage()

  /// Tokens per second of one prefill: the prompt starts with a new word each
  /// run, so only the template's first tokens are reused, and exactly one token
  /// is generated. Returns the rate, the number of tokens prefilled, and
  /// the cells the whole prompt fills (those reused too).
  static func prefill(model: LocalSystemModel, prompt: String, run: Int) async throws -> (Double, Int, cells: Int) {
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt("run\(run) " + prompt)]),
      options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 1)),
      sessionStorage: storage)
    let start = ContinuousClock.now
    let response = try await model.respond(to: request)
    let elapsed = (ContinuousClock.now - start).seconds
    let usage = response.usageMetadata
    let prefilled = (usage?.promptTokenCount ?? 0) - (usage?.cachedContentTokenCount ?? 0)
    return (Double(prefilled) / elapsed, prefilled, usage?.promptTokenCount ?? 0)
  }

  /// Generated tokens per second, from the first token to the last.
  static func decode(model: LocalSystemModel, tokens: Int) async throws -> (Double, Int) {
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt("Write a long essay about the history of the Roman Empire.")]),
      options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens)),
      sessionStorage: decodeStorage)
    var first: ContinuousClock.Instant?
    var generated = 0
    for try await delta in model.streamResponse(to: request) {
      if first == nil { first = .now }
      generated = delta.usageMetadata?.candidatesTokenCount ?? generated
    }
    guard let first, generated > 1 else { return (.nan, generated) }
    // From the first token's text to the end: every token decoded once.
    return (Double(generated) / (ContinuousClock.now - first).seconds, generated)
  }

  /// Milliseconds for a new session to answer "Hi" with one token. `model`
  /// decides whether a pooled context is there to take (warm) or one must be
  /// created (cold: a model value with an empty pool).
  static func firstTurn(model: LocalSystemModel) async throws -> Double {
    var session: GenerativeModelSession? = GenerativeModelSession(model: model, logHandler: .silent)
    defer { session = nil }
    let start = ContinuousClock.now
    _ = try await session?.respond(
      to: "Hi", options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 1)))
    return (ContinuousClock.now - start).seconds * 1000
  }
}
