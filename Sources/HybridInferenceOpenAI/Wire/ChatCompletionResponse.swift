import Foundation
import HybridInferenceCore
import HybridInferenceRemote

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
    /// Whole calls in a unary answer; fragments (by `index`) in a stream.
    var toolCalls: [ToolCallFragment]?

    enum CodingKeys: String, CodingKey {
      case content, refusal
      case reasoningContent = "reasoning_content"
      case toolCalls = "tool_calls"
    }
  }

  /// A function call, or in a stream a piece of one: the first piece names
  /// the call, the later ones add to its `arguments` string.
  struct ToolCallFragment: Sendable, Hashable, Decodable {
    var index: Int?
    var id: String?
    var function: Function?

    struct Function: Sendable, Hashable, Decodable {
      var name: String?
      var arguments: String?
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
      for call in message?.toolCalls ?? [] {
        parts.append(Part(functionCall: Self.functionCall(id: call.id, call.function?.name, call.function?.arguments)))
      }
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

  /// A call in the library's shape. Arguments that are not JSON stay as
  /// their text (a JSON string), so the session's check of the arguments
  /// against the tool's schema sends the model its mistake.
  static func functionCall(id: String?, _ name: String?, _ arguments: String?) -> Part.FunctionCall {
    let text = arguments ?? ""
    let args: JSONValue
    if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
      args = .object([:])
    } else if let value = try? JSONPrefixParser.parse(text) {
      // The library's own reader keeps integers beyond 2^53 exact.
      args = value.jsonValue
    } else {
      args = .string(text)
    }
    return Part.FunctionCall(id: id, name: name ?? "", args: args)
  }

  /// `stop` is a finished answer (`tool_calls` too: the calls are its parts), `length` one cut at `max_tokens`,
  /// `content_filter` a stop for policy (an error, as Gemini's SAFETY is);
  /// anything else is kept upper-cased, which the library treats as a stop
  /// it does not know (an error carrying the text so far).
  static func finishReason(_ wire: String) -> FinishReason {
    switch wire {
    case "stop", "eos", "stop_sequence", "tool_calls", "function_call": .stop
    case "length", "max_tokens": .maxTokens
    case "content_filter": .safety
    default: FinishReason(rawValue: wire.uppercased())
    }
  }
}
