/// The tool half of chat templates: what `tools` and a message's
/// `tool_calls` look like to a template (as transformers passes them), and
/// which call syntax a template's model writes.
extension ChatTemplate {
  /// The call syntax of this template's family, when the template renders
  /// `tools` (checked by rendering a probe tool) and writes calls in a syntax
  /// this library parses; nil otherwise (the generic format is used then).
  var toolSyntax: ToolCallSyntax? {
    guard let template, let family = ToolCallSyntax.family(ofTemplate: template) else { return nil }
    let probe = ToolDeclaration(
      name: "hybrid_probe_tool", description: "probe",
      parameters: (try? GenerationSchema(jsonSchema: #"{"type":"object","properties":{}}"#))
        ?? GenerationSchema(deriving: String.self))
    let messages = [Message(role: "user", content: "probe")]
    guard case .success(let template)? = compiled,
      let text = try? template.render(variables(messages, true, tools: [probe])),
      text.contains("hybrid_probe_tool")
    else { return nil }
    return family
  }
}

extension ChatTemplate.Message {
  /// The message as transformers hands it to a template.
  var jinjaValue: JinjaValue {
    var fields: [(String, JinjaValue)] = [("role", .string(role)), ("content", .string(content))]
    if !toolCalls.isEmpty {
      fields.append(
        (
          "tool_calls",
          .array(
            toolCalls.map { call in
              .dict(
                JinjaDict([
                  ("id", call.id.map(JinjaValue.string) ?? .none), ("type", .string("function")),
                  (
                    "function",
                    .dict(
                      JinjaDict([
                        ("name", .string(call.name)), ("arguments", OrderedJSON(call.args ?? .object([:])).jinjaValue),
                      ]))
                  ),
                ]))
            })
        ))
    }
    if let toolCallID { fields.append(("tool_call_id", .string(toolCallID))) }
    if let name { fields.append(("name", .string(name))) }
    return .dict(JinjaDict(fields))
  }
}

extension ToolDeclaration {
  /// The tool as transformers hands it to a template:
  /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
  var jinjaValue: JinjaValue {
    let parameters = (try? parameters.ordered())?.jinjaValue ?? .dict(JinjaDict([]))
    return .dict(
      JinjaDict([
        ("type", .string("function")),
        (
          "function",
          .dict(
            JinjaDict([
              ("name", .string(name)), ("description", .string(description)), ("parameters", parameters),
            ]))
        ),
      ]))
  }
}

extension OrderedJSON {
  /// The value as a template sees JSON (member order kept).
  var jinjaValue: JinjaValue {
    switch self {
    case .null: .none
    case .bool(let flag): .bool(flag)
    case .number(let number):
      number == number.rounded() && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
    // Beyond Int64 a template (as Python's would, through its json) cannot
    // hold the integer; its nearest Double is what a model can read.
    case .exactInteger(let integer): integer.exactly(Int.self).map(JinjaValue.int) ?? .double(integer.doubleValue)
    case .string(let text): .string(text)
    case .array(let items): .array(items.map(\.jinjaValue))
    case .object(let members): .dict(JinjaDict(members.map { ($0.0, $0.1.jinjaValue) }))
    }
  }
}
