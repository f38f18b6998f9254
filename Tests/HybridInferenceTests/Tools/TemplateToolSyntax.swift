import Foundation

@testable import HybridInferenceLlama

/// The call syntaxes of a few fixture templates, as the device reads them,
/// for tests that need one family's syntax without its template.
extension ToolCallSyntax {
  static let fixtureTemplates = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chat-templates/templates")

  /// The syntax the fixture template `name` is read as (generic when it has none).
  static func ofFixture(_ name: String) -> ToolCallSyntax {
    let source = (try? String(contentsOf: fixtureTemplates.appendingPathComponent(name), encoding: .utf8)) ?? ""
    return ChatTemplate(template: source, bosToken: "<s>", eosToken: "</s>").toolSyntax ?? .generic
  }

  /// Qwen 2.5's `<tool_call>{"name": ...}</tool_call>`.
  static var hermes: ToolCallSyntax { ofFixture("Qwen-Qwen2.5-7B-Instruct.jinja") }
  /// Llama 3.1's bare `{"name": ..., "parameters": ...}`.
  static var llama3: ToolCallSyntax { ofFixture("meta-llama-Llama-3.1-8B-Instruct.jinja") }
  /// Mistral Nemo's `[TOOL_CALLS][{...}]`.
  static var mistralJSON: ToolCallSyntax { ofFixture("mistralai-Mistral-Nemo-Instruct-2407.jinja") }
  static var allFamilies: [ToolCallSyntax] { [.generic, .hermes, .llama3, .mistralJSON] }
}
