extension Transcript.Entry {
  /// The tool outputs of one round, as a user turn of `functionResponse`
  /// parts (Gemini's shape; the device renders them as the template's tool
  /// messages).
  public static func toolOutputs(_ outputs: [Part.FunctionResponse]) -> Transcript.Entry {
    Transcript.Entry(
      role: .user, content: Content(role: Role.user.rawValue, parts: outputs.map { Part(functionResponse: $0) }))
  }

  /// The tool calls in this entry (a model turn that asked for tools), in order.
  public var toolCalls: [Part.FunctionCall] { content.parts.compactMap(\.functionCall) }

  /// The tool outputs in this entry (the turn that answered them), in order.
  public var toolOutputs: [Part.FunctionResponse] { content.parts.compactMap(\.functionResponse) }
}

extension Part.FunctionCall {
  /// The arguments as compact JSON text (`{}` when the model sent none).
  public var argumentsJSON: String { (args ?? .object([:])).jsonText }
}

extension Part.FunctionResponse {
  /// The output a session's tool returned, as sent to the model: `{"output": text}`.
  public static func output(_ text: String, name: String, id: String?) -> Part.FunctionResponse {
    Part.FunctionResponse(id: id, name: name, response: .object(["output": .string(text)]))
  }

  /// A problem with the call, sent back instead of an output: `{"error": text}`.
  public static func error(_ text: String, name: String, id: String?) -> Part.FunctionResponse {
    Part.FunctionResponse(id: id, name: name, response: .object(["error": .string(text)]))
  }

  /// The output text (`response.output`), or the error text, or the response as JSON.
  public var outputText: String {
    response["output"]?.stringValue ?? response["error"]?.stringValue.map { "error: \($0)" } ?? response.jsonText
  }

  /// Whether this is a problem report rather than the tool's output.
  public var isError: Bool { response["error"] != nil && response["output"] == nil }
}

extension JSONValue {
  /// Compact JSON text (object members in name order).
  var jsonText: String { OrderedJSON(self).jsonText }
}
