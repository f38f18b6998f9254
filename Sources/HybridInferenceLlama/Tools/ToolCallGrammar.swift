import HybridInferenceCore
import HybridInferenceJinja

/// The GBNF grammar of a tool call in one `ToolCallSyntax`, built from the
/// offered tools: the name is one of theirs and the arguments follow that
/// tool's schema (`SchemaGrammar`), so a call parses by construction.
///
/// Its start is the syntax's trigger (`<tool_call>`, `[TOOL_CALLS]`, or the
/// `{` of a bare object): as a lazy grammar it is fed from the trigger on,
/// and as a forced one it is the whole answer.
enum ToolCallGrammar {
  /// The most calls one answer may hold, where the syntax allows several.
  static let maximumCalls = 4

  static func gbnf(for tools: [ToolDeclaration], syntax: ToolCallSyntax) throws(HybridInferenceError) -> String {
    guard !tools.isEmpty else { throw .unsupportedRequest("no tool to call") }
    var rules: [(String, String)] = []
    var names: Set<String> = []
    var alternatives: [String] = []
    for (index, tool) in tools.enumerated() {
      let (arguments, own) = try SchemaGrammar.rules(for: tool.parameters, prefix: "t\(index)-")
      for rule in own where names.insert(rule.0).inserted { rules.append(rule) }
      let name = SchemaGrammar.literal(OrderedJSON.quote(tool.name))
      let key = SchemaGrammar.literal(OrderedJSON.quote(syntax.argumentsKey))
      let rule = "t\(index)-call"
      rules.append((rule, #"\#(name) ws "," ws \#(key) ws ":" ws \#(arguments)"#))
      alternatives.append(rule)
    }
    if names.insert("ws").inserted { rules.append(("ws", #"" "?"#)) }
    let call = #""{" ws "\"name\"" ws ":" ws (\#(alternatives.joined(separator: " | "))) ws "}""#
    let more = maximumCalls - 1
    let root: String =
      switch syntax {
      case .hermes:
        #"block ("\n"? block){0,\#(more)}"#
      case .llama3, .generic:
        "call"
      case .mistralJSON:
        #""[TOOL_CALLS]" "[" call ("," ws call){0,\#(more)} "]""#
      }
    var lines = [("root", root), ("call", call)]
    if syntax == .hermes { lines.append(("block", #""<tool_call>" "\n"? call "\n"? "</tool_call>""#)) }
    return (lines + rules).map { "\($0.0) ::= \($0.1)" }.joined(separator: "\n") + "\n"
  }
}
