import HybridInferenceCore
import HybridInferenceJinja

/// The tool half of chat templates: what `tools` and a message's
/// `tool_calls` look like to a template (as transformers passes them), and
/// which call syntax a template's model writes.
extension ChatTemplate {
  /// The call syntax of this template's model: the pattern it prints for a
  /// call (`ToolCallPattern.derive`), and whether it renders `tools` too
  /// (checked by rendering the probe tool: DeepSeek R1's and V3.1's print
  /// calls but not the tools, which the device then describes in the system
  /// turn); nil when it prints no call in a pattern this library describes
  /// (the generic format is used then). Read once per template: every copy
  /// shares the answer.
  var toolSyntax: ToolCallSyntax? {
    toolSyntaxCache.withLock { cached in
      if let cached { return cached }
      let derived = deriveToolSyntax()
      cached = .some(derived)
      return derived
    }
  }

  private func deriveToolSyntax() -> ToolCallSyntax? {
    guard case .success(let template)? = compiled else { return nil }
    let probe = ToolCallPattern.Probe.tool
    let offered = [Message(role: "user", content: "probe")]
    let rendersTools = (try? template.render(variables(offered, true, tools: [probe])))?.contains(probe.name) ?? false
    let pattern = ToolCallPattern.derive { (messages: [Message]) throws(JinjaError) -> String in
      try template.render(variables(messages, false, tools: [probe]))
    }
    return pattern.map { ToolCallSyntax(pattern: $0, rendersTools: rendersTools) }
  }
}

extension ChatTemplate.Message {
  /// The message as transformers hands it to a template, with `text` applied
  /// to every string it brings (`PromptMask`; the identity for the real render).
  func jinjaValue(_ text: (String) -> String) -> JinjaValue {
    var fields: [(String, JinjaValue)] = [("role", .string(role)), ("content", .string(text(content)))]
    if !toolCalls.isEmpty {
      let calls = toolCalls.map { call -> JinjaValue in
        let function = JinjaDict([
          ("name", .string(text(call.name))),
          ("arguments", OrderedJSON(call.args ?? .object([:])).argumentsJinjaValue(masking: text)),
        ])
        return .dict(
          JinjaDict([
            ("id", call.id.map { .string(text($0)) } ?? .none), ("type", .string("function")),
            ("function", .dict(function)),
          ]))
      }
      fields.append(("tool_calls", .array(calls)))
    }
    if let toolCallID { fields.append(("tool_call_id", .string(text(toolCallID)))) }
    if let name { fields.append(("name", .string(text(name)))) }
    if let reasoningContent { fields.append(("reasoning_content", .string(text(reasoningContent)))) }
    return .dict(JinjaDict(fields))
  }
}

extension ToolDeclaration {
  /// The tool as transformers hands it to a template:
  /// `{"type": "function", "function": {"name", "description", "parameters"}}`,
  /// with `text` applied to its name, its description and the descriptions
  /// and titles in its argument schema (`PromptMask`).
  func jinjaValue(_ text: (String) -> String) -> JinjaValue {
    let parameters = (try? parameters.ordered())?.schemaJinjaValue(masking: text) ?? .dict(JinjaDict([]))
    return .dict(
      JinjaDict([
        ("type", .string("function")),
        (
          "function",
          .dict(
            JinjaDict([
              ("name", .string(text(name))), ("description", .string(text(description))), ("parameters", parameters),
            ]))
        ),
      ]))
  }
}

extension OrderedJSON {
  /// The value as a template sees JSON (member order kept), with `text` applied to every key and string (a call's arguments).
  func argumentsJinjaValue(masking text: (String) -> String) -> JinjaValue {
    switch self {
    case .string(let string): .string(text(string))
    case .array(let items): .array(items.map { $0.argumentsJinjaValue(masking: text) })
    case .object(let members):
      .dict(JinjaDict(members.map { (text($0.0), $0.1.argumentsJinjaValue(masking: text)) }))
    default: scalarJinjaValue
    }
  }

  /// The schema with `text` applied to its `description` and `title`
  /// strings only: its types, property names and `enum` values are what
  /// templates compare and iterate.
  func schemaJinjaValue(masking text: (String) -> String) -> JinjaValue {
    switch self {
    case .array(let items): .array(items.map { $0.schemaJinjaValue(masking: text) })
    case .object(let members):
      .dict(
        JinjaDict(
          members.map { key, value in
            if key == "description" || key == "title", case .string(let string) = value {
              return (key, .string(text(string)))
            }
            return (key, value.schemaJinjaValue(masking: text))
          }))
    default: scalarJinjaValue
    }
  }

  /// A null, boolean or number as a template sees it.
  private var scalarJinjaValue: JinjaValue {
    switch self {
    case .bool(let flag): .bool(flag)
    case .number(let number):
      number == number.rounded() && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
    // Beyond Int64 a template (as Python's would, through its json) cannot
    // hold the integer; its nearest Double is what a model can read.
    case .exactInteger(let integer): integer.exactly(Int.self).map(JinjaValue.int) ?? .double(integer.doubleValue)
    case .string(let text): .string(text)
    case .null, .array, .object: .none
    }
  }
}
