/// A session's conversation: its instructions and every turn so far.
///
/// Both models read the same transcript, so a conversation can move from one
/// to the other on a fallback and go on. Each answer records which model gave it.
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
    /// Who spoke.
    public var role: Role
    /// What was said, as wire parts (kept whole, thought signatures included).
    public var content: Content
    /// For answers, the model that gave it (`GenerateContentResponse.modelVersion`).
    public var modelVersion: String?

    /// A turn by `role`; `modelVersion` names the model for answers.
    public init(role: Role, content: Content, modelVersion: String? = nil) {
      self.role = role
      self.content = content
      self.modelVersion = modelVersion
    }

    /// A user prompt.
    public static func prompt(_ text: String) -> Entry {
      Entry(role: .user, content: Content(role: Role.user.rawValue, text: text))
    }

    /// A model's answer.
    public static func response(_ content: Content, modelVersion: String) -> Entry {
      var content = content
      content.role = Role.model.rawValue
      return Entry(role: .model, content: content, modelVersion: modelVersion)
    }

    /// The answer text (thoughts excluded).
    public var text: String { content.text }

    /// The speakers, named as on the wire.
    public enum Role: String, Sendable, Hashable {
      case user
      case model
    }
  }
}
