import HybridInferenceCore
import HybridInferenceJinja

/// How the device serves one request's tools: the call syntax, the messages
/// (tools described, earlier calls and outputs in place), the grammar and
/// whether it is forced or lazy.
///
/// A template that renders `tools` and prints calls in a pattern the library
/// reads (`ToolCallPattern`) gets that format; any other model gets the generic format, which
/// describes the tools in the system turn (`instructions`) and
/// constrains the answer to either a call object or text. `.required`
/// forces the call from the first token; `.auto` leaves the answer free
/// until the trigger appears; `.none` offers nothing.
struct LocalToolPlan {
  let syntax: ToolCallSyntax
  let messages: [ChatTemplate.Message]
  /// The tools the template renders (empty in the generic format, and when none are offered).
  let templateTools: [ToolDeclaration]
  /// The tools offered, whose schemas the parser reads.
  let offered: [ToolDeclaration]
  /// The call grammar, or nil when no tool is offered.
  let grammar: String?
  /// Whether the grammar waits for the trigger (`.auto`) or holds from the start.
  let isLazy: Bool

  /// The plan for `request`, or nil when it involves no tools at all.
  /// - Throws: `unsupportedRequest` when tools are offered but the template
  ///   has no tool format and `allowsGenericFormat` is false, or a response
  ///   schema is asked for too; a hybrid then falls back before any tool ran.
  init?(
    request: ModelRequest, template: ChatTemplate, allowsGenericFormat: Bool,
    reading: DeviceMedia.Reading = .textOnly
  ) throws(HybridInferenceError) {
    let offered = request.offeredTools
    let history = request.transcript.entries.contains { !$0.toolCalls.isEmpty || !$0.toolOutputs.isEmpty }
    guard !offered.isEmpty || history else { return nil }
    let family = template.toolSyntax
    if !offered.isEmpty, family == nil, !allowsGenericFormat {
      throw .unsupportedRequest("the on-device model's chat template has no tool format and the generic one is off")
    }
    if !offered.isEmpty, request.responseSchema != nil {
      throw .unsupportedRequest("the on-device model does not combine tools with a response schema")
    }
    syntax = family ?? .generic
    var messages = try ChatTemplate.messages(of: request.transcript, syntax: syntax, reading: reading)
    if !syntax.rendersTools || syntax.pattern == nil, !offered.isEmpty {
      let description = try Self.instructions(offered, syntax: syntax)
      if messages.first?.role == "system" {
        messages[0].content += "\n\n" + description
      } else {
        messages.insert(ChatTemplate.Message(role: "system", content: description), at: 0)
      }
    }
    self.messages = messages
    self.offered = offered
    templateTools = syntax.usesTemplateTools && syntax.rendersTools ? offered : []
    grammar = offered.isEmpty ? nil : try ToolCallGrammar.gbnf(for: offered, syntax: syntax)
    isLazy = request.options.toolChoice.mode != .required
  }

  /// The system text that describes the tools, their argument schemas, and
  /// how to call one: for the generic format, and for a template that
  /// prints calls but not the tools (one example call in its pattern).
  static func instructions(_ tools: [ToolDeclaration], syntax: ToolCallSyntax) throws(HybridInferenceError) -> String {
    var lines = [
      "You can call these tools:"
    ]
    for tool in tools {
      lines.append(
        "- \(tool.name): \(tool.description) Arguments (JSON Schema): \(try tool.parameters.jsonSchemaText())")
    }
    if let pattern = syntax.pattern {
      let example = pattern.written(
        name: "<tool name>", id: "abcdefghi", arguments: [("<argument>", .string("<value>"))],
        json: #"{"<argument>": "<value>"}"#)
      lines.append("To call a tool, write: " + pattern.sectionOpen + example + pattern.sectionClose)
      lines.append("Otherwise, and once you have a tool's output, answer in plain text.")
    } else {
      lines.append(
        #"To call a tool, answer with only the JSON object {"name": <tool name>, "arguments": <arguments>}. "#
          + "Otherwise, and once you have a tool's output, answer in plain text.")
    }
    return lines.joined(separator: "\n")
  }
}

/// How the generic format shows a tool's output to the model: a user turn
/// that says which tool answered and asks for the answer in text (a small
/// model otherwise tends to call the same tool again).
enum ToolOutputPrompt {
  static func generic(_ output: Part.FunctionResponse) -> String {
    let lead = output.isError ? "The call of \(output.name) failed" : "The tool \(output.name) returned"
    return "\(lead): \(output.outputText)\nUse this to answer the question in plain text."
  }
}
