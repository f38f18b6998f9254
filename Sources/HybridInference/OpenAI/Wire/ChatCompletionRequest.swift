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

  enum CodingKeys: String, CodingKey {
    case model, messages, stream, temperature, stop, seed, n
    case streamOptions = "stream_options"
    case topP = "top_p"
    case topK = "top_k"
    case maxTokens = "max_tokens"
    case presencePenalty = "presence_penalty"
    case frequencyPenalty = "frequency_penalty"
    case responseFormat = "response_format"
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

  /// The wire form of a session request: the instructions as a `system`
  /// message, then every turn as `user` or `assistant` (`model` turns, from
  /// Gemini or the device alike), with its answer text; thoughts stay out,
  /// as the protocol has no place for them. Empty turns are left out, as
  /// the Gemini encoder does.
  ///
  /// Options come from the `gemini` half (the cloud half of a hybrid's
  /// options): temperature, topP, topK, maxOutputTokens, stopSequences,
  /// seed, candidateCount, the penalties, and `application/json` as JSON
  /// mode. A request's `responseSchema` becomes a strict `json_schema`
  /// response format (the session still decodes and checks the answer, as
  /// not every server enforces it). Thinking settings have no counterpart in
  /// the protocol and are not sent.
  /// - Throws: `.unsupportedRequest` for a turn with inline data or a file
  ///   (this backend is text only); `.unsupportedSchema` for a schema that
  ///   failed to derive.
  init(_ request: ModelRequest, model: String, stream: Bool) throws(HybridInferenceError) {
    var messages: [ChatMessage] = []
    if let instructions = request.transcript.instructions, !instructions.isEmpty {
      messages.append(ChatMessage(role: "system", content: instructions))
    }
    for entry in request.transcript.entries {
      if entry.content.parts.contains(where: { $0.inlineData != nil || $0.fileData != nil }) {
        throw .unsupportedRequest("an OpenAI-compatible server is sent text only (the turn has inline data or a file)")
      }
      let text = entry.content.text
      guard !text.isEmpty else { continue }
      messages.append(ChatMessage(role: entry.role == .user ? "user" : "assistant", content: text))
    }
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
    if let schema = request.responseSchema {
      if let error = schema.derivationError { throw error }
      responseFormat = ResponseFormat(
        type: "json_schema", jsonSchema: JSONSchemaFormat(name: "response", schema: schema, strict: true))
    } else if config?.responseMimeType == "application/json" {
      responseFormat = ResponseFormat(type: "json_object")
    }
  }
}

/// One message of the conversation: `system`, `user` or `assistant`.
struct ChatMessage: Sendable, Hashable, Codable {
  var role: String
  var content: String
}
