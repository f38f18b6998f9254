import HybridInferenceCore
import HybridInferenceJinja

/// Reads the tool calls out of an on-device answer, in its `ToolCallSyntax`.
///
/// A call the grammar forced parses by construction; one the grammar did
/// not see (cut off by the token limit, or written without the trigger)
/// may not, and is a typed error, so a hybrid can still fall back before any
/// tool ran. The arguments are checked against the tool's schema later, by
/// the session, for every backend alike.
enum ToolCallParser {
  /// The calls in `text` (with fresh ids) and the text outside them.
  static func parse(_ text: String, syntax: ToolCallSyntax) throws(HybridInferenceError) -> (
    text: String, calls: [Part.FunctionCall]
  ) {
    switch syntax {
    case .hermes:
      return try blocks(text)
    case .llama3, .generic:
      // A call opens with `{"name"`; other text that starts with a brace
      // (code, a JSON example the user asked for) is an answer, as the lazy
      // grammar saw it: it holds only once that opening appears.
      let trimmed = text.trimmingWhitespace
      guard trimmed.hasPrefix("{"), trimmed.dropFirst().trimmingPrefix(while: \.isWhitespace).hasPrefix(#""name""#)
      else { return (text, []) }
      return ("", [try call(from: try json(trimmed), syntax: syntax)])
    case .mistralJSON:
      var rest = Substring(text.trimmingWhitespace)
      if rest.hasPrefix(syntax.trigger) { rest = rest.dropFirst(syntax.trigger.count) }
      guard rest.hasPrefix("[") else { return (text, []) }
      guard case .array(let items) = try json(String(rest)) else { throw malformed(text) }
      var calls: [Part.FunctionCall] = []
      for item in items { calls.append(try call(from: item, syntax: syntax)) }
      return ("", calls)
    }
  }

  /// Hermes blocks: `<tool_call>{...}</tool_call>`, any number, text around them.
  private static func blocks(_ text: String) throws(HybridInferenceError) -> (String, [Part.FunctionCall]) {
    var calls: [Part.FunctionCall] = []
    var outside = ""
    var rest = Substring(text)
    while let open = rest.range(of: "<tool_call>") {
      outside += rest[..<open.lowerBound]
      let body = rest[open.upperBound...]
      let close = body.range(of: "</tool_call>")
      calls.append(try call(from: try json(String(body[..<(close?.lowerBound ?? body.endIndex)])), syntax: .hermes))
      rest = close.map { body[$0.upperBound...] } ?? ""
    }
    outside += rest
    return (calls.isEmpty ? text : outside.trimmingWhitespace, calls)
  }

  private static func json(_ text: String) throws(HybridInferenceError) -> OrderedJSON {
    do {
      return try JSONPrefixParser.parse(text.trimmingWhitespace)
    } catch {
      throw malformed(text)
    }
  }

  /// One `{"name": ..., "arguments": {...}}` object (arguments may also
  /// arrive as a string holding JSON, as some models write them).
  private static func call(from value: OrderedJSON, syntax: ToolCallSyntax) throws(HybridInferenceError)
    -> Part.FunctionCall
  {
    guard let name = value["name"]?.string else { throw malformed(value.jsonText) }
    var arguments = value[syntax.argumentsKey] ?? value["arguments"] ?? .object([])
    if let text = arguments.string { arguments = try json(text) }
    return Part.FunctionCall(id: newID(), name: name, args: arguments.jsonValue)
  }

  private static func malformed(_ text: String) -> HybridInferenceError {
    .generationFailed("the model's tool call could not be read: \(text.prefix(200))")
  }

  /// A call id: nine letters and digits, the form Mistral's templates require.
  static func newID() -> String {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    return String((0..<9).map { _ in alphabet.randomElement() ?? "a" })
  }
}

extension String {
  /// The text without leading and trailing spaces and newlines.
  var trimmingWhitespace: String {
    JinjaMethods.strip(self, nil, leading: true, trailing: true)
  }
}
