/// One turn of a conversation on the wire: who spoke and what they said.
///
/// Follows the REST `Content` type. The library uses it for every turn of the
/// transcript, on both models, so parts the cloud returned (thought signatures,
/// function calls) are kept and sent back unchanged.
public struct Content: Sendable, Hashable, Codable {
  /// `"user"` or `"model"`; absent in a system instruction.
  public var role: String?
  /// The ordered parts of the turn.
  public var parts: [Part]

  /// A turn from `role` made of `parts`.
  public init(role: String? = nil, parts: [Part]) {
    self.role = role
    self.parts = parts
  }

  /// A content made of one text part.
  public init(role: String? = nil, text: String) {
    self.init(role: role, parts: [Part(text: text)])
  }

  /// The answer text: every non-thought text part, concatenated.
  public var text: String {
    parts.lazy.filter { $0.thought != true }.compactMap(\.text).joined()
  }

  /// The thought summaries, kept apart from the answer text.
  public var thoughtText: String {
    parts.lazy.filter { $0.thought == true }.compactMap(\.text).joined()
  }

  enum CodingKeys: String, CodingKey { case role, parts }

  /// Decodes a turn; a missing `parts` is an empty list.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    role = try container.decodeIfPresent(String.self, forKey: .role)
    // The API omits `parts` on empty turns; an empty list is the same thing.
    parts = try container.decodeIfPresent([Part].self, forKey: .parts) ?? []
  }
}
