/// Everything a backend needs to answer one turn.
public struct ModelRequest: Sendable {
  /// The instructions and every turn so far, ending with the new prompt.
  public var transcript: Transcript
  /// The options, both halves: each backend reads only its own (the cloud
  /// `gemini`, the device `foundationModels`), so routers and wrappers pass
  /// them on untouched and never need to know what they wrap.
  public var options: HybridGenerationOptions
  /// The shape the answer must have, or nil for free text. It travels
  /// outside the option halves because both backends honour it (the cloud
  /// as `responseJsonSchema`, the device as a grammar), so a hybrid falls
  /// back with the schema intact.
  public var responseSchema: GenerationSchema?
  /// Per-session storage a backend may use to keep work between turns.
  public let sessionStorage: SessionStorage
  /// Where the backend reports what it does.
  public let logHandler: LogHandler

  /// A request; a backend under test can be given one directly.
  public init(
    transcript: Transcript, options: HybridGenerationOptions = .default,
    responseSchema: GenerationSchema? = nil, sessionStorage: SessionStorage = SessionStorage(),
    logHandler: LogHandler = .silent
  ) {
    self.transcript = transcript
    self.options = options
    self.responseSchema = responseSchema
    self.sessionStorage = sessionStorage
    self.logHandler = logHandler
  }
}
