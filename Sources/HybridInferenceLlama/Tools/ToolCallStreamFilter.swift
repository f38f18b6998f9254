import HybridInferenceCore
import HybridInferenceJinja

/// Passes an on-device answer's text through as it is generated, except a
/// tool call's: from the point where a call may be starting, the text is
/// held back, and at the end it becomes `functionCall` parts instead of text.
///
/// A call that can only start the answer (generic, Llama 3) is decided by
/// the first character that is not a space; a call that may follow text
/// (`<tool_call>`, `[TOOL_CALLS]`) holds back any tail that could be the start
/// of the trigger, so the markup never reaches the caller.
struct ToolCallStreamFilter: Sendable {
  let syntax: ToolCallSyntax
  /// The offered tools, whose schemas tell a tagged string value from JSON.
  let tools: [ToolDeclaration]
  private var held = ""
  private var holdingCall = false

  init(syntax: ToolCallSyntax, tools: [ToolDeclaration] = []) {
    self.syntax = syntax
    self.tools = tools
  }

  /// What of `text` may be shown now.
  mutating func feed(_ text: String) -> String {
    held += text
    if holdingCall { return "" }
    if syntax.callStartsAnswer {
      let trimmed = held.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
      guard let first = trimmed.first else { return "" }
      if first == "{" {
        holdingCall = true
        return ""
      }
      return releaseAll()
    }
    if let start = held.range(of: syntax.trigger) {
      holdingCall = true
      let before = String(held[..<start.lowerBound])
      held = String(held[start.lowerBound...])
      return before
    }
    // Keep back the longest tail that is a prefix of the trigger.
    let keep = (1..<syntax.trigger.count).reversed().first { syntax.trigger.hasPrefix(held.suffix($0)) } ?? 0
    let shown = String(held.dropLast(keep))
    held = String(held.suffix(keep))
    return shown
  }

  /// The held text's calls, and any text it held that was not a call.
  mutating func finish() throws(HybridInferenceError) -> (text: String, calls: [Part.FunctionCall]) {
    guard holdingCall else { return (releaseAll(), []) }
    let (text, calls) = try ToolCallParser.parse(held, syntax: syntax, tools: tools)
    held = ""
    return (text, calls)
  }

  private mutating func releaseAll() -> String {
    let shown = held
    held = ""
    return shown
  }
}
