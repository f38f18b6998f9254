/// A `/chat/completions` answer (unary) or one chunk of a stream.
///
/// Both shapes differ only in `message` (unary) versus `delta` (chunk), so
/// one type decodes either; `response(fallbackModel:)` turns it into the
/// library's `GenerateContentResponse`, which every backend reports through.
struct ChatCompletionResponse: Sendable, Hashable, Decodable {
  var id: String?
  var model: String?
  var choices: [Choice]
  var usage: Usage?

  enum CodingKeys: String, CodingKey { case id, model, choices, usage }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decodeIfPresent(String.self, forKey: .id)
    model = try container.decodeIfPresent(String.self, forKey: .model)
    // The usage-only last chunk of a stream has `"choices": []`; some
    // servers leave the field out instead.
    choices = try container.decodeIfPresent([Choice].self, forKey: .choices) ?? []
    usage = try container.decodeIfPresent(Usage.self, forKey: .usage)
  }

  struct Choice: Sendable, Hashable, Decodable {
    var index: Int?
    var message: Message?
    var delta: Message?
    var finishReason: String?

    enum CodingKeys: String, CodingKey {
      case index, message, delta
      case finishReason = "finish_reason"
    }
  }

  /// The answer text; `reasoning_content` is what llama-server and vLLM send
  /// for a reasoning model's thinking, kept apart as thought parts.
  struct Message: Sendable, Hashable, Decodable {
    var content: String?
    var reasoningContent: String?
    var refusal: String?

    enum CodingKeys: String, CodingKey {
      case content, refusal
      case reasoningContent = "reasoning_content"
    }
  }

  struct Usage: Sendable, Hashable, Decodable {
    var promptTokens: Int?
    var completionTokens: Int?
    var totalTokens: Int?

    enum CodingKeys: String, CodingKey {
      case promptTokens = "prompt_tokens"
      case completionTokens = "completion_tokens"
      case totalTokens = "total_tokens"
    }
  }

  /// The answer in the library's shape: one candidate per choice, its text
  /// as parts, `finish_reason` as a `FinishReason`, usage as token counts,
  /// and `modelVersion` the server's `model` (else `fallbackModel`).
  func response(fallbackModel: String) -> GenerateContentResponse {
    let candidates = choices.map { choice -> Candidate in
      let message = choice.message ?? choice.delta
      var parts: [Part] = []
      if let thinking = message?.reasoningContent, !thinking.isEmpty {
        parts.append(Part(text: thinking, thought: true))
      }
      if let text = message?.content, !text.isEmpty { parts.append(Part(text: text)) }
      if let refusal = message?.refusal, !refusal.isEmpty { parts.append(Part(text: refusal)) }
      return Candidate(
        content: parts.isEmpty && choice.message == nil ? nil : Content(role: "model", parts: parts),
        finishReason: choice.finishReason.map(Self.finishReason), index: choice.index)
    }
    let usageMetadata = usage.map {
      UsageMetadata(
        promptTokenCount: $0.promptTokens, candidatesTokenCount: $0.completionTokens,
        totalTokenCount: $0.totalTokens)
    }
    let modelVersion = model.flatMap { $0.isEmpty ? nil : $0 } ?? fallbackModel
    return GenerateContentResponse(
      candidates: candidates, usageMetadata: usageMetadata, modelVersion: modelVersion, responseId: id)
  }

  /// `stop` is a finished answer, `length` one cut at `max_tokens`,
  /// `content_filter` a stop for policy (an error, as Gemini's SAFETY is);
  /// anything else is kept upper-cased, which the library treats as a stop
  /// it does not know (an error carrying the text so far).
  static func finishReason(_ wire: String) -> FinishReason {
    switch wire {
    case "stop", "eos", "stop_sequence": .stop
    case "length", "max_tokens": .maxTokens
    case "content_filter": .safety
    default: FinishReason(rawValue: wire.uppercased())
    }
  }
}
