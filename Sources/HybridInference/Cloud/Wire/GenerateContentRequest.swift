/// The body of `:generateContent` and `:streamGenerateContent` (REST
/// `GenerateContentRequest`).
///
/// Nil fields are left out of the JSON (the synthesized `Encodable` uses
/// `encodeIfPresent`), so the server applies its own defaults and a field the
/// API does not know is never sent.
struct GenerateContentRequest: Sendable, Hashable, Encodable {
  /// Every turn of the conversation, oldest first, ending with the new prompt.
  var contents: [Content]
  /// The session's instructions.
  var systemInstruction: Content?
  /// The cloud half of the request's options.
  var generationConfig: GenerationConfig?
  /// The model's safety thresholds.
  var safetySettings: [SafetySetting]?

  /// The wire form of a session request: transcript entries become contents
  /// with their role and parts unchanged (thought signatures and function
  /// calls included), instructions become the system instruction.
  init(_ request: ModelRequest, safetySettings: [SafetySetting]?) {
    self.init(
      transcript: request.transcript, generationConfig: request.options.gemini,
      safetySettings: safetySettings)
  }

  init(transcript: Transcript, generationConfig: GenerationConfig?, safetySettings: [SafetySetting]?) {
    contents = transcript.entries.map { entry in
      Content(role: entry.role.rawValue, parts: entry.content.parts)
    }
    if let instructions = transcript.instructions, !instructions.isEmpty {
      systemInstruction = Content(text: instructions)
    }
    self.generationConfig = generationConfig
    self.safetySettings = safetySettings?.isEmpty == false ? safetySettings : nil
  }
}
