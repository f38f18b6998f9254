import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// What the command reports about one answer: the `You used:` line on stderr,
/// or with `--json` one JSON object on stdout.
public struct ResponseSummary: Sendable {
  /// The answer text.
  public var content: String
  /// The model's full response (model name, usage, finish reason).
  public var response: GenerateContentResponse
  /// The mode the answer was asked in.
  public var mode: InferenceMode
  /// The fallback the hybrid took, if it took one.
  public var fallback: FallbackEvent?
  /// How long it took.
  public var timing: ResponseTiming
  /// The model's thoughts before the answer; nil or empty when it did not
  /// think or they are hidden (`--hide-thoughts`).
  public var thoughts: String?

  /// A summary of one answer.
  public init(
    content: String, response: GenerateContentResponse, mode: InferenceMode,
    fallback: FallbackEvent?, timing: ResponseTiming, thoughts: String? = nil
  ) {
    self.content = content
    self.thoughts = thoughts
    self.response = response
    self.mode = mode
    self.fallback = fallback
    self.timing = timing
  }

  /// The answer tokens, as the model counted them.
  public var answerTokens: Int? { response.usageMetadata?.candidatesTokenCount }

  /// The tokens the model generated: its thoughts and its answer. The speed
  /// counts both, since the time it is measured over holds both.
  public var generatedTokens: Int? {
    guard let answerTokens else { return nil }
    let (sum, overflow) = answerTokens.addingReportingOverflow(response.usageMetadata?.thoughtsTokenCount ?? 0)
    return overflow ? nil : sum
  }

  /// The one line for stderr, in the seed's spirit:
  /// `You used: <modelVersion> (<file>) · 12 prompt + 8 answer tokens · first token 85 ms · 41.2 tokens/s`;
  /// a model that thought adds its thought tokens (`12 prompt + 30 thought + 8 answer tokens`).
  public var usageLine: String {
    var parts: [String] = []
    var model = "You used: \(response.modelVersion)"
    if let name = response.localModelName, !name.isEmpty { model += " (\(name))" }
    parts.append(model)
    if let usage = response.usageMetadata {
      var counts: [String] = []
      if let prompt = usage.promptTokenCount { counts.append("\(prompt) prompt") }
      if let thoughts = usage.thoughtsTokenCount, thoughts > 0 { counts.append("\(thoughts) thought") }
      if let answer = usage.candidatesTokenCount {
        counts.append("\(answer) answer")
        parts.append(counts.joined(separator: " + ") + " tokens")
      }
    }
    if let first = timing.timeToFirstToken {
      parts.append("first token \(Self.format(first))")
    } else {
      parts.append("total \(Self.format(timing.total))")
    }
    if let generatedTokens, let speed = timing.tokensPerSecond(tokens: generatedTokens) {
      parts.append(String(format: "%.1f tokens/s", speed))
    }
    return parts.joined(separator: " · ")
  }

  /// Milliseconds under ten seconds, seconds above.
  static func format(_ duration: Duration) -> String {
    let seconds = duration.seconds
    return seconds < 10 ? String(format: "%.0f ms", seconds * 1000) : String(format: "%.1f s", seconds)
  }

  /// One JSON object on one line (JSON Lines), keys sorted. Every key is
  /// always present, `null` when it has no value, so a consumer can index
  /// without checking; `thoughts` alone is left out when there are none, so
  /// that the object of a model that does not think is unchanged. Every control character is a JSON escape
  /// (`TerminalText.json`), so the line is safe on a terminal too.
  public func jsonLine() throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(JSONShape(self))
    return TerminalText.json(String(decoding: data, as: UTF8.self))
  }
}

/// The JSON object of one answer.
private struct JSONShape: Encodable {
  let summary: ResponseSummary

  init(_ summary: ResponseSummary) { self.summary = summary }

  enum Keys: String, CodingKey {
    case content, thoughts, modelVersion, localModelName, usage, finishReason, fallback, mode, timing
  }

  enum FallbackKeys: String, CodingKey { case from, to, reason }
  enum TimingKeys: String, CodingKey { case totalMs, timeToFirstTokenMs, tokensPerSecond }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    let response = summary.response
    try container.encode(summary.content, forKey: .content)
    if let thoughts = summary.thoughts, !thoughts.isEmpty {
      try container.encode(thoughts, forKey: .thoughts)
    }
    try container.encode(response.modelVersion, forKey: .modelVersion)
    try container.encode(response.localModelName, forKey: .localModelName)
    // The REST `UsageMetadata` field names, so cloud and device read alike.
    try container.encode(response.usageMetadata, forKey: .usage)
    try container.encode(response.finishReason?.rawValue, forKey: .finishReason)
    try container.encode(summary.mode.rawValue, forKey: .mode)
    if let fallback = summary.fallback {
      var nested = container.nestedContainer(keyedBy: FallbackKeys.self, forKey: .fallback)
      try nested.encode(fallback.from, forKey: .from)
      try nested.encode(fallback.to, forKey: .to)
      try nested.encode(fallback.reason.description, forKey: .reason)
    } else {
      try container.encodeNil(forKey: .fallback)
    }
    var timing = container.nestedContainer(keyedBy: TimingKeys.self, forKey: .timing)
    try timing.encode(summary.timing.total.milliseconds, forKey: .totalMs)
    try timing.encode(summary.timing.timeToFirstToken?.milliseconds, forKey: .timeToFirstTokenMs)
    let speed = summary.generatedTokens.flatMap { summary.timing.tokensPerSecond(tokens: $0) }
    try timing.encode(speed.map { ($0 * 10).rounded() / 10 }, forKey: .tokensPerSecond)
  }
}
