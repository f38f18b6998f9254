import HybridInferenceCore
import HybridInferenceJinja

/// The GBNF grammar of a tool call in one `ToolCallSyntax`, built from the
/// offered tools: the name is one of theirs and the arguments follow that
/// tool's schema (`SchemaGrammar`), so a call parses by construction.
///
/// Its start is the syntax's trigger: as a lazy grammar it is fed from the
/// trigger on, and as a forced one it is the whole answer. A template's
/// pattern builds its own (`ToolCallPattern.gbnf`); the generic format's is
/// one bare `{"name": ..., "arguments": ...}` object.
enum ToolCallGrammar {
  static func gbnf(for tools: [ToolDeclaration], syntax: ToolCallSyntax) throws(HybridInferenceError) -> String {
    if let pattern = syntax.pattern { return try pattern.gbnf(for: tools) }
    guard !tools.isEmpty else { throw .unsupportedRequest("no tool to call") }
    var rules: [(String, String)] = []
    var names: Set<String> = []
    var alternatives: [String] = []
    for (index, tool) in tools.enumerated() {
      let (arguments, own) = try SchemaGrammar.rules(for: tool.parameters, prefix: "t\(index)-")
      for rule in own where names.insert(rule.0).inserted { rules.append(rule) }
      let name = SchemaGrammar.literal(OrderedJSON.quote(tool.name))
      let rule = "t\(index)-call"
      rules.append((rule, #"\#(name) ws "," ws "\"arguments\"" ws ":" ws \#(arguments)"#))
      alternatives.append(rule)
    }
    if names.insert("ws").inserted { rules.append(("ws", #"" "?"#)) }
    let call = #""{" ws "\"name\"" ws ":" ws (\#(alternatives.joined(separator: " | "))) ws "}""#
    return ([("root", "call"), ("call", call)] + rules).map { "\($0.0) ::= \($0.1)" }.joined(separator: "\n") + "\n"
  }
}
