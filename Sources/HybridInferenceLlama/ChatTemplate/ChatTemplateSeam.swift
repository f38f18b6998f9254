/// A model's chat template, as the render benchmark (`local-benchmark
/// render`) times it: parsed, rendered as a request renders it, and rendered
/// by the engine alone. Not API: the benchmark target's access to an
/// internal type, kept to what it times.
package struct ChatTemplateSeam: Sendable {
  /// A template as a model file carries it, not yet parsed.
  package struct Source: Sendable {
    fileprivate let template: String?
    fileprivate let bosToken: String
    fileprivate let eosToken: String
  }

  /// A conversation in the template's terms, built before anything is timed.
  package struct Conversation: Sendable {
    fileprivate let messages: [ChatTemplate.Message]

    /// Messages by role (`user`, `assistant`, `system`) and text.
    package init(_ turns: [(role: String, content: String)]) {
      messages = turns.map { ChatTemplate.Message(role: $0.role, content: $0.content) }
    }
  }

  /// A rendered prompt; `text` joins its pieces, so read it outside what is timed.
  package struct Prompt: Sendable {
    fileprivate let rendered: RenderedPrompt
    /// The whole prompt, as the model reads it.
    package var text: String { rendered.text }
  }

  private let template: ChatTemplate

  /// The chat template of the GGUF file at `modelPath`, loaded for it.
  package static func source(ofModelAt modelPath: String) async throws -> Source {
    let model = try await LocalSystemModel(modelPath: modelPath).loadedModel(progress: nil)
    return Source(
      template: model.chatTemplate, bosToken: model.template.bosToken, eosToken: model.template.eosToken)
  }

  /// Parses `source`, as a model load does.
  package init(_ source: Source) {
    template = ChatTemplate(template: source.template, bosToken: source.bosToken, eosToken: source.eosToken)
  }

  /// The prompt a request builds (the real and the masked render, split),
  /// ending where the answer begins; fallbacks are not logged.
  package func render(_ conversation: Conversation) -> Prompt {
    Prompt(rendered: template.render(conversation.messages, log: .silent))
  }

  /// The engine's render of the template alone, as transformers would
  /// render it; nil when the engine cannot run the template.
  package func renderText(_ conversation: Conversation) -> String? {
    try? template.renderText(conversation.messages, addGenerationPrompt: true)
  }
}
