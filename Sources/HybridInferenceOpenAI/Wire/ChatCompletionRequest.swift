import HybridInferenceCore
import HybridInferenceRemote

/// The body of `POST /chat/completions` (the OpenAI chat-completions
/// protocol, as llama-server, vLLM, Ollama and gateways speak it).
///
/// Nil fields are left out of the JSON, so the server applies its own
/// defaults and a field it may not know (`top_k`) is only sent when set.
struct ChatCompletionRequest: Sendable, Hashable, Encodable {
  var model: String
  var messages: [ChatMessage]
  var stream: Bool
  var streamOptions: StreamOptions?
  var temperature: Double?
  var topP: Double?
  var topK: Int?
  var maxTokens: Int?
  var stop: [String]?
  var seed: Int?
  var n: Int?
  var presencePenalty: Double?
  var frequencyPenalty: Double?
  var responseFormat: ResponseFormat?
  var tools: [ChatTool]?
  var toolChoice: ChatToolChoice?

  enum CodingKeys: String, CodingKey {
    case model, messages, stream, temperature, stop, seed, n
    case streamOptions = "stream_options"
    case topP = "top_p"
    case topK = "top_k"
    case maxTokens = "max_tokens"
    case presencePenalty = "presence_penalty"
    case frequencyPenalty = "frequency_penalty"
    case responseFormat = "response_format"
    case tools
    case toolChoice = "tool_choice"
  }

  /// `include_usage` asks for a last chunk with the token counts.
  struct StreamOptions: Sendable, Hashable, Encodable {
    var includeUsage: Bool
    enum CodingKeys: String, CodingKey { case includeUsage = "include_usage" }
  }

  /// `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`
  /// for a request's response schema; `{"type": "json_object"}` for
  /// `responseMimeType: "application/json"` without one.
  struct ResponseFormat: Sendable, Hashable, Encodable {
    var type: String
    var jsonSchema: JSONSchemaFormat?
    enum CodingKeys: String, CodingKey {
      case type
      case jsonSchema = "json_schema"
    }
  }

  /// The schema part of `response_format` (`strict`: vLLM and OpenAI then
  /// constrain decoding to it; llama-server always does).
  struct JSONSchemaFormat: Sendable, Hashable, Encodable {
    var name: String
    var schema: GenerationSchema
    var strict: Bool
  }

  /// The wire form of a session request: the transcript as messages
  /// (`ChatMessage.messages(of:)`), the offered tools as `tools` with
  /// `tool_choice` when a call is required.
  ///
  /// Options come from the `gemini` half (the cloud half of a hybrid's
  /// options): temperature, topP, topK, maxOutputTokens, stopSequences,
  /// seed, candidateCount, the penalties, and `application/json` as JSON
  /// mode. A request's `responseSchema` becomes a strict `json_schema`
  /// response format (the session still decodes and checks the answer, as
  /// not every server enforces it). Thinking settings have no counterpart in
  /// the protocol and are not sent.
  /// - Throws: `.unsupportedRequest` for media the protocol cannot carry
  ///   (`ChatMessage.messages(of:)`); `.requestTooLarge` for inline media
  ///   over `inlineMediaLimit` encoded bytes (`InlineMediaSize`), before
  ///   any of it is encoded; `.unsupportedSchema` for a schema that failed
  ///   to derive.
  init(
    _ request: ModelRequest, model: String, stream: Bool,
    inlineMediaLimit: Int = RequestOptions.defaultMaximumInlineMediaBytes
  ) throws(HybridInferenceError) {
    try InlineMediaSize.check(request.transcript, limit: inlineMediaLimit)
    let messages = try ChatMessage.messages(of: request.transcript)
    self.model = model
    self.messages = messages
    self.stream = stream
    self.streamOptions = stream ? StreamOptions(includeUsage: true) : nil
    let config = request.options.gemini
    temperature = config?.temperature
    topP = config?.topP
    topK = config?.topK
    maxTokens = config?.maxOutputTokens
    stop = config?.stopSequences?.isEmpty == false ? config?.stopSequences : nil
    seed = config?.seed
    n = config?.candidateCount
    presencePenalty = config?.presencePenalty
    frequencyPenalty = config?.frequencyPenalty
    let offered = request.offeredTools
    tools = offered.isEmpty ? nil : offered.map(ChatTool.init)
    toolChoice = offered.isEmpty ? nil : ChatToolChoice(request.options.toolChoice)
    if let schema = request.responseSchema {
      if let error = schema.derivationError { throw error }
      responseFormat = ResponseFormat(
        type: "json_schema", jsonSchema: JSONSchemaFormat(name: "response", schema: schema, strict: true))
    } else if config?.responseMimeType == "application/json" {
      responseFormat = ResponseFormat(type: "json_object")
    }
  }
}
