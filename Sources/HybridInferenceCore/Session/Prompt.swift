/// What a turn asks: text, and media that go with it.
///
/// ```swift
/// let seen = try await session.respond(
///   to: Prompt("What is in this picture?", attachments: [.image(photo, mimeType: "image/jpeg")]))
/// ```
///
/// The turn is sent as the text first, then the attachments in order (a
/// prompt of attachments alone is valid; one with neither is `emptyPrompt`).
/// Every entry point of `GenerativeModelSession` takes one (respond and
/// stream; text, `Generable` and schema answers; with tools), and so does
/// `CloudGeminiModel.countTokens`. A string literal is a prompt of that
/// text, and the `String` overloads stay, so `respond(to: "Hi")` and
/// `respond(to: someString)` both compile. See `Attachment` for which
/// model reads which media.
public struct Prompt: Sendable, Hashable, ExpressibleByStringLiteral {
  /// The text of the turn; may be empty when there are attachments.
  public var text: String
  /// The media, sent after the text, in this order.
  public var attachments: [Attachment]

  /// A prompt of `text` and `attachments`.
  public init(_ text: String = "", attachments: [Attachment] = []) {
    self.text = text
    self.attachments = attachments
  }

  /// A prompt of the literal's text.
  public init(stringLiteral text: String) {
    self.init(text)
  }

  /// The turn as wire parts: a text part (unless the text is empty), then
  /// each attachment's part.
  public var parts: [Part] {
    (text.isEmpty ? [] : [Part(text: text)]) + attachments.map(\.part)
  }

  /// Refuses a prompt with nothing in it, and attachments that cannot be
  /// right (`Attachment`), before anything is sent.
  package func validate() throws(HybridInferenceError) {
    guard !text.isEmpty || !attachments.isEmpty else { throw .emptyPrompt }
    for (index, attachment) in attachments.enumerated() {
      try attachment.validate(position: index + 1)
    }
  }
}

extension Transcript.Entry {
  /// A user prompt with its attachments (`Prompt.parts`).
  public static func prompt(_ prompt: Prompt) -> Transcript.Entry {
    Transcript.Entry(role: .user, content: Content(role: Role.user.rawValue, parts: prompt.parts))
  }
}
