import HybridInferenceCore
import HybridInferenceRemote

/// One message of the conversation: `system`, `user`, `assistant` (with
/// its text and/or `tool_calls`) or `tool` (one call's output).
struct ChatMessage: Sendable, Hashable, Encodable {
  var role: String
  var content: String?
  /// A user turn with media, sent as `content` in the array form instead of
  /// `content`'s string.
  var contentParts: [ChatContentPart]?
  var toolCalls: [ChatToolCall]?
  var toolCallID: String?

  enum CodingKeys: String, CodingKey {
    case role, content
    case toolCalls = "tool_calls"
    case toolCallID = "tool_call_id"
  }

  init(role: String, content: String?, toolCalls: [ChatToolCall]? = nil, toolCallID: String? = nil) {
    self.role = role
    self.content = content
    self.toolCalls = toolCalls
    self.toolCallID = toolCallID
  }

  /// A user message with media: `content` as an array of parts.
  init(userParts: [ChatContentPart]) {
    self.init(role: "user", content: nil)
    contentParts = userParts
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(role, forKey: .role)
    if let contentParts {
      try container.encode(contentParts, forKey: .content)
    } else {
      try container.encodeIfPresent(content, forKey: .content)
    }
    try container.encodeIfPresent(toolCalls, forKey: .toolCalls)
    try container.encodeIfPresent(toolCallID, forKey: .toolCallID)
  }

  /// The messages of `transcript`: the instructions as `system`, then every
  /// turn as `user` or `assistant` (`model` turns, from Gemini or the device
  /// alike) with its answer text; a turn's function calls as the assistant's
  /// `tool_calls`, and each function response as a `tool` message. Thoughts
  /// stay out (the protocol has no place for them), and so do empty turns,
  /// as the Gemini encoder does.
  ///
  /// The protocol pairs a call and its output by id. A call that came without
  /// one (from a Gemini model that gives none) gets `call_N`, and its output,
  /// matched by name in order, the same.
  ///
  /// A user turn with attachments is sent as a `content` array, text first
  /// and the media in order (`ChatContentPart`).
  /// - Throws: `.unsupportedRequest` for media the protocol cannot carry (a
  ///   file URI, a type other than images and WAV or MP3 audio), and for
  ///   media in an answer (the protocol has no place for an assistant's);
  ///   `.invalidTranscript` for a call or output nested deeper than
  ///   `JSONValue.maximumDepth`, before their text is written (recursively).
  static func messages(of transcript: Transcript) throws(HybridInferenceError) -> [ChatMessage] {
    try transcript.checkNesting()
    var messages: [ChatMessage] = []
    if let instructions = transcript.instructions, !instructions.isEmpty {
      messages.append(ChatMessage(role: "system", content: instructions))
    }
    var ids = CallIDs()
    for entry in transcript.entries {
      if entry.content.parts.contains(where: { $0.inlineData != nil || $0.fileData != nil }) {
        guard entry.role == .user else {
          throw .unsupportedRequest(
            "an OpenAI-compatible server takes no media in an answer (an earlier turn has some)")
        }
        messages.append(ChatMessage(userParts: try ChatContentPart.parts(of: entry.content)))
        continue
      }
      let text = entry.content.text
      let calls = entry.toolCalls
      let outputs = entry.toolOutputs
      if !outputs.isEmpty {
        messages += outputs.map {
          ChatMessage(role: "tool", content: $0.outputText, toolCallID: $0.id ?? ids.take(for: $0.name))
        }
      }
      if !calls.isEmpty {
        let wireCalls = calls.map { ChatToolCall(id: $0.id ?? ids.make(for: $0.name), call: $0) }
        messages.append(ChatMessage(role: "assistant", content: text.isEmpty ? nil : text, toolCalls: wireCalls))
      } else if !text.isEmpty {
        messages.append(ChatMessage(role: entry.role == .user ? "user" : "assistant", content: text))
      }
    }
    return messages
  }

  /// Ids for calls that came without one, handed back to their outputs.
  private struct CallIDs {
    private var count = 0
    private var pending: [(name: String, id: String)] = []

    mutating func make(for name: String) -> String {
      count += 1
      pending.append((name, "call_\(count)"))
      return "call_\(count)"
    }

    mutating func take(for name: String) -> String {
      guard let index = pending.firstIndex(where: { $0.name == name }) else { return "call_unknown" }
      return pending.remove(at: index).id
    }
  }
}
