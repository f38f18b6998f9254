/// A session's conversation: its instructions and every turn so far.
///
/// Both models read the same transcript, so a conversation can move from one
/// to the other on a fallback and go on. Each answer records which model gave it.
///
/// `Codable`, in a documented, versioned JSON format (`formatVersion`), so a
/// conversation can be saved and resumed in another process with
/// `GenerativeModelSession(model:transcript:tools:contextOverflow:logHandler:)`.
public struct Transcript: Sendable, Hashable {
  /// The system instructions, sent before every turn.
  public var instructions: String?
  /// The turns, oldest first.
  public var entries: [Entry]

  /// A transcript with optional instructions and the turns so far.
  public init(instructions: String? = nil, entries: [Entry] = []) {
    self.instructions = instructions
    self.entries = entries
  }

  /// One turn.
  public struct Entry: Sendable, Hashable {
    /// Who spoke; `content.role` always says the same.
    public var role: Role {
      didSet { content.role = role.rawValue }
    }
    /// What was said, as wire parts (kept whole, thought signatures
    /// included). Its `role` is always `role`'s, whatever is assigned.
    public var content: Content {
      didSet { content.role = role.rawValue }
    }
    /// For answers, the model that gave it (`GenerateContentResponse.modelVersion`).
    public var modelVersion: String?
    /// For answers, the backend and model that wrote them, as far as thought
    /// signatures go (`GenerateContentResponse.producer`: for Gemini the
    /// model's endpoint, `https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-flash-lite`).
    /// The entry's thought signatures are sent back only to that same
    /// producer and left out for any other (another Gemini model after a
    /// fallback, a transcript restored onto another model or server): Gemini
    /// refuses a signature another model made. Nil (an entry built by hand,
    /// an answer from a backend without signatures) matches no producer.
    public var producer: String?

    /// A turn by `role`; `modelVersion` and `producer` name the model for answers.
    public init(role: Role, content: Content, modelVersion: String? = nil, producer: String? = nil) {
      self.role = role
      var content = content
      content.role = role.rawValue
      self.content = content
      self.modelVersion = modelVersion
      self.producer = producer
    }

    /// A user prompt.
    public static func prompt(_ text: String) -> Entry {
      Entry(role: .user, content: Content(role: Role.user.rawValue, text: text))
    }

    /// A model's answer; `producer` as the response named it (`GenerateContentResponse.producer`).
    public static func response(_ content: Content, modelVersion: String, producer: String? = nil) -> Entry {
      Entry(role: .model, content: content, modelVersion: modelVersion, producer: producer)
    }

    /// The answer text (thoughts excluded).
    public var text: String { content.text }

    /// The speakers, named as on the wire.
    public enum Role: String, Sendable, Hashable {
      /// The app's side: prompts, and tool outputs.
      case user
      /// The model's side: answers, and tool calls.
      case model
    }
  }
}
