import HybridInference

/// Prefill and decode speed of `LocalSystemModel` through the public API.
enum LocalThroughput {
  /// A prompt of about `tokens` tokens once the chat template is applied.
  static func prompt(of tokens: Int, model: LocalSystemModel) async throws -> String {
    var words = Array(repeating: "river", count: tokens)
    while true {
      let text = words.joined(separator: " ")
      let count = try await model.countTokens(
        "<|im_start|>user\n\(text)<|im_end|>\n<|im_start|>assistant\n")
      if count <= tokens || words.isEmpty { return text }
      words.removeLast(max(1, (count - tokens) / 2))
    }
  }

  /// Prompt tokens per second: a fresh session (nothing cached) answering one
  /// token, so the time is almost all prefill.
  static func prefill(model: LocalSystemModel, prompt: String, runs: Int) async throws -> (Double, Int) {
    var rates: [Double] = []
    var promptTokens = 0
    for _ in 0..<runs {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      let start = ContinuousClock.now
      let response = try await session.respond(
        to: prompt, options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 1)))
      let elapsed = (ContinuousClock.now - start).seconds
      promptTokens = response.rawResponse.usageMetadata?.promptTokenCount ?? 0
      rates.append(Double(promptTokens) / elapsed)
    }
    return (median(rates), promptTokens)
  }

  /// Generated tokens per second between the first and the last token.
  static func decode(model: LocalSystemModel, tokens: Int, runs: Int) async throws -> (Double, Int) {
    var rates: [Double] = []
    var generated = 0
    for _ in 0..<runs {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      var first: ContinuousClock.Instant?
      var last = ContinuousClock.now
      var response: GenerateContentResponse?
      let options = GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens)
      for try await snapshot in session.streamResponse(
        to: "Write a long essay about the history of the Roman Empire.", options: .foundationModels(options))
      {
        if first == nil { first = .now }
        last = .now
        response = snapshot.rawResponse
      }
      generated = response?.usageMetadata?.candidatesTokenCount ?? 0
      guard let first, generated > 1 else { continue }
      rates.append(Double(generated - 1) / (last - first).seconds)
    }
    return (median(rates), generated)
  }
}
