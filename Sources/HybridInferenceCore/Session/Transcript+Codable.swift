/// The transcript's JSON format, version 1 (README, "Saving a conversation").
///
/// ```json
/// {
///   "formatVersion": 1,
///   "instructions": "Answer in one sentence.",
///   "entries": [
///     {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
///     {"role": "model", "modelVersion": "gemini-3.1-flash-lite",
///      "producer": "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-flash-lite",
///      "parts": [{"functionCall": {"id": "c1", "name": "getWeather", "argsJSON": "{\"city\":\"Paris\"}"},
///                 "thoughtSignature": "CiQB..."}]},
///     {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "getWeather",
///                                                      "responseJSON": "{\"output\":\"18°C\"}"}}]},
///     {"role": "model", "modelVersion": "gemini-3.1-flash-lite", "parts": [{"text": "18°C and sunny."}]}
///   ]
/// }
/// ```
///
/// - `formatVersion` is required. A reader reads its own version and every
///   older one; a later one is a `DecodingError`, never a guess.
/// - An entry is `role` (`user` or `model`), its `parts`, and for answers
///   `modelVersion` and `producer` (where its thought signatures are valid,
///   `Transcript.Entry.producer`). Absent optional fields are left out.
/// - A part holds the fields of Gemini's REST `Part` it has: `text`,
///   `thought`, `thoughtSignature`, `inlineData` (`mimeType`, `data` in
///   base64), `fileData` (`mimeType`, `fileUri`), `functionCall` (`id`,
///   `name`, `argsJSON`), `functionResponse` (`id`, `name`, `responseJSON`),
///   `executableCode` (`language`, `code`), `codeExecutionResult`
///   (`outcome`, `output`). A key it does not know is a `DecodingError`:
///   dropping it would lose part of the conversation.
/// - Tool arguments and outputs are JSON *text* (`argsJSON`,
///   `responseJSON`), written and read by the library's own JSON code: a
///   coder's number model cannot keep an integer beyond 64 bits, nor tell
///   the double 2^60 from the integer, and the text keeps every digit and
///   every `JSONValue` case (`.exactInteger` beyond ±2^53, as the library
///   makes it). A number that is not finite, or nesting deeper than
///   `JSONValue.maximumDepth` (512) levels, cannot be written (`EncodingError`)
///   nor read (`DecodingError`).
/// - Decoding checks what a session could have written (`Transcript`'s
///   validation: an output answers a call of the turn before it, calls are
///   the model's, outputs the app's) and throws `DecodingError.dataCorrupted`
///   naming the entry.
///
/// With the default `JSONEncoder` and `JSONDecoder` strategies a transcript
/// decodes to one `==` to what was encoded. The one value that cannot: an
/// `.exactInteger` within ±2^53, which the library never makes (it holds
/// such integers as `.number`) and JSON text cannot tell apart, reads back
/// as the equal `.number`.
extension Transcript: Codable {
  /// The version this library writes, and the newest it reads.
  public static let formatVersion = 1

  private enum CodingKeys: String, CodingKey { case formatVersion, instructions, entries }

  /// Reads a transcript, checking it (see the extension's documentation).
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let version = try container.decode(Int.self, forKey: .formatVersion)
    guard version >= 1 else {
      throw DecodingError.dataCorruptedError(
        forKey: .formatVersion, in: container,
        debugDescription: "formatVersion \(version) is not a version (1 is the first)")
    }
    guard version <= Self.formatVersion else {
      throw DecodingError.dataCorruptedError(
        forKey: .formatVersion, in: container,
        debugDescription:
          "the transcript is in format version \(version), written by a later version of HybridInference; this one reads up to \(Self.formatVersion)"
      )
    }
    self.init(
      instructions: try container.decodeIfPresent(String.self, forKey: .instructions),
      entries: try container.decode([Entry].self, forKey: .entries))
    if let problem = firstProblem() {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: decoder.codingPath + [CodingKeys.entries, IndexKey(problem.entry)],
          debugDescription: "not a transcript a session could have written: \(problem.reason)"))
    }
  }

  /// Writes the transcript in the current format version.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(Self.formatVersion, forKey: .formatVersion)
    try container.encodeIfPresent(instructions, forKey: .instructions)
    try container.encode(entries, forKey: .entries)
  }
}

extension Transcript.Entry: Codable {
  private enum CodingKeys: String, CodingKey { case role, parts, modelVersion, producer }

  /// Reads an entry: a role this version knows, and its parts.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let name = try container.decode(String.self, forKey: .role)
    guard let role = Role(rawValue: name) else {
      throw DecodingError.dataCorruptedError(
        forKey: .role, in: container,
        debugDescription: "unknown role \(OrderedJSON.quote(name)); an entry is \"user\" or \"model\"")
    }
    let parts = try container.decode([TranscriptPart].self, forKey: .parts).map(\.part)
    self.init(
      role: role, content: Content(role: role.rawValue, parts: parts),
      modelVersion: try container.decodeIfPresent(String.self, forKey: .modelVersion),
      producer: try container.decodeIfPresent(String.self, forKey: .producer))
  }

  /// Writes the entry.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(role.rawValue, forKey: .role)
    try container.encode(content.parts.map(TranscriptPart.init), forKey: .parts)
    try container.encodeIfPresent(modelVersion, forKey: .modelVersion)
    try container.encodeIfPresent(producer, forKey: .producer)
  }
}

/// An array position in a coding path.
struct IndexKey: CodingKey {
  let intValue: Int?
  var stringValue: String { intValue.map { "Index \($0)" } ?? "" }
  init(_ index: Int) { intValue = index }
  init?(stringValue: String) { nil }
  init?(intValue: Int) { self.intValue = intValue }
}
