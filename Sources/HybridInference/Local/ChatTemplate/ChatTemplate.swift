import CLlama
import Foundation

/// Turns a transcript into the prompt text the model was trained on.
///
/// The template is the one the GGUF file carries, applied by llama.cpp's
/// `llama_chat_apply_template`, which recognises the common template families
/// (ChatML, Llama 3, Gemma, …) by pattern rather than running Jinja. A model
/// with no template, or one llama.cpp does not recognise, gets the plain
/// fallback: `System: …`, `User: …`, `Assistant: …` lines, ending with
/// `Assistant:` for the model to continue.
///
/// Message bodies never go through the template: it renders placeholders,
/// which are then replaced by the bodies as text segments (`RenderedPrompt`),
/// so markers inside a message are never read as the template's own.
struct ChatTemplate: Sendable {
  /// The template text from the GGUF file; nil when the file has none.
  let template: String?

  /// One message in llama.cpp's terms.
  struct Message: Equatable {
    var role: String
    var content: String
  }

  /// The messages of `transcript`: instructions as `system`, then every turn.
  /// Non-text parts a local model cannot read make the request unsupported.
  static func messages(of transcript: Transcript) throws(HybridInferenceError) -> [Message] {
    var messages: [Message] = []
    if let instructions = transcript.instructions, !instructions.isEmpty {
      messages.append(Message(role: "system", content: instructions))
    }
    for entry in transcript.entries {
      if entry.role == .user,
        entry.content.parts.contains(where: { $0.inlineData != nil || $0.fileData != nil })
      {
        throw .unsupportedRequest("the on-device model reads text only")
      }
      let role = entry.role == .user ? "user" : "assistant"
      messages.append(Message(role: role, content: entry.text))
    }
    return messages
  }

  /// The prompt for `messages`; with `addGenerationPrompt` it ends where the
  /// assistant's answer begins.
  func render(_ messages: [Message], addGenerationPrompt: Bool = true) -> RenderedPrompt {
    // A fresh nonce per render: a body cannot contain a placeholder it cannot know.
    let nonce = UInt64.random(in: 0...UInt64.max)
    let placeholders = messages.indices.map { "\u{E000}hybrid-\(nonce)-\($0)\u{E001}" }
    let masked = zip(messages, placeholders).map { Message(role: $0.role, content: $1) }
    let bodies = messages.map(\.content)
    if let template, let formatted = Self.applyBuiltIn(template, masked, addGenerationPrompt),
      let prompt = RenderedPrompt(rendered: formatted, placeholders: placeholders, bodies: bodies)
    {
      return prompt
    }
    return Self.plain(messages, addGenerationPrompt: addGenerationPrompt)
  }

  /// Whether llama.cpp recognises the file's template.
  var isRecognised: Bool {
    guard let template else { return false }
    return Self.applyBuiltIn(template, [Message(role: "user", content: "x")], true) != nil
  }

  private static func applyBuiltIn(
    _ template: String, _ messages: [Message], _ addGenerationPrompt: Bool
  ) -> String? {
    let roles = messages.map { strdup($0.role) }
    let contents = messages.map { strdup($0.content) }
    defer {
      roles.forEach { free($0) }
      contents.forEach { free($0) }
    }
    var chat = zip(roles, contents).map { llama_chat_message(role: $0, content: $1) }
    let estimate = messages.reduce(256) { $0 + 2 * ($1.content.utf8.count + $1.role.utf8.count) }
    var buffer = [CChar](repeating: 0, count: estimate)
    var length = llama_chat_apply_template(
      template, &chat, chat.count, addGenerationPrompt, &buffer, Int32(buffer.count))
    guard length >= 0 else { return nil }
    if Int(length) > buffer.count {
      buffer = [CChar](repeating: 0, count: Int(length))
      length = llama_chat_apply_template(
        template, &chat, chat.count, addGenerationPrompt, &buffer, Int32(buffer.count))
      guard length >= 0, Int(length) <= buffer.count else { return nil }
    }
    return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  static func plain(_ messages: [Message], addGenerationPrompt: Bool = true) -> RenderedPrompt {
    var segments: [RenderedPrompt.Segment] = []
    for message in messages {
      let speaker =
        switch message.role {
        case "system": "System"
        case "user": "User"
        default: "Assistant"
        }
      segments.append(.markup("\(speaker): "))
      segments.append(.text(message.content))
      segments.append(.markup("\n"))
    }
    if addGenerationPrompt { segments.append(.markup("Assistant:")) }
    return RenderedPrompt(segments: segments)
  }
}
