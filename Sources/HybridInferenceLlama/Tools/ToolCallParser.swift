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
  /// The calls in `text` (with fresh ids) and the text outside them;
  /// `tools` tells a tagged argument's string values from others.
  static func parse(
    _ text: String, syntax: ToolCallSyntax, tools: [ToolDeclaration] = []
  ) throws(HybridInferenceError) -> (text: String, calls: [Part.FunctionCall]) {
    if let pattern = syntax.pattern { return try pattern.read(text, tools: tools) }
    // A call opens with `{"name"`; other text that starts with a brace
    // (code, a JSON example the user asked for) is an answer, as the lazy
    // grammar saw it: it holds only once that opening appears.
    let trimmed = text.trimmingWhitespace
    guard trimmed.hasPrefix("{"), trimmed.dropFirst().trimmingPrefix(while: \.isWhitespace).hasPrefix(#""name""#)
    else { return (text, []) }
    let value: OrderedJSON
    do {
      value = try JSONPrefixParser.parse(trimmed)
    } catch {
      throw malformed(text)
    }
    guard let name = value["name"]?.string else { throw malformed(value.jsonText) }
    var arguments = value["arguments"] ?? .object([])
    // Some models write the arguments as a string holding JSON.
    if let inner = arguments.string { arguments = (try? JSONPrefixParser.parse(inner)) ?? arguments }
    return ("", [Part.FunctionCall(id: newID(), name: name, args: arguments.jsonValue)])
  }

  static func malformed(_ text: String) -> HybridInferenceError {
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
