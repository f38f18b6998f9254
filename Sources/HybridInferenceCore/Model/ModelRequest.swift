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
  /// The tools the model may call (the session's, whatever `toolChoice`
  /// says: a backend reads `options.toolChoice` to know which it may offer).
  /// Empty for a session without tools.
  public var tools: [ToolDeclaration]
  /// What to do when the transcript does not fit the model's window:
  /// `.fail` (throw `contextWindowExceeded`) or `.dropOldestTurns`. A hybrid
  /// passes `.fail` to a primary whose secondary can still answer, so that it
  /// falls back first and only the model that answers last trims (see
  /// `LanguageModel.promptTokenCount(for:)`).
  public var contextOverflow: ContextOverflow
  /// Per-session storage a backend may use to keep work between turns.
  public let sessionStorage: SessionStorage
  /// Where the backend reports what it does.
  public let logHandler: LogHandler
  /// Which side each hybrid on the way answered with, and whether a tool has
  /// run (after which hybrids must not fall back): shared by the rounds of
  /// one request.
  let route: ToolRoute
  /// How many hybrids this request has passed through (the key into `route`).
  var routeDepth = 0
  /// The start of the answer another model gave before its stream broke,
  /// for an on-device model to continue (`HybridModel.continuesInterruptedAnswers`):
  /// the model prefills it as the start of its turn, byte for byte, and
  /// generates what follows. Set only by a hybrid, and only for a model on
  /// device or another hybrid (a cloud model is given the partial answer as
  /// turns instead, `ModelRequest.prepared(for:)`).
  package var continuedAnswer: String?

  /// A request; a backend under test can be given one directly.
  public init(
    transcript: Transcript, options: HybridGenerationOptions = .default,
    responseSchema: GenerationSchema? = nil, tools: [ToolDeclaration] = [],
    sessionStorage: SessionStorage = SessionStorage(), logHandler: LogHandler = .silent,
    contextOverflow: ContextOverflow = .fail
  ) {
    self.transcript = transcript
    self.options = options
    self.responseSchema = responseSchema
    self.tools = tools
    self.sessionStorage = sessionStorage
    self.logHandler = logHandler
    self.contextOverflow = contextOverflow
    self.route = ToolRoute()
  }

  /// The tools the model may call on this request, after `options.toolChoice`.
  public var offeredTools: [ToolDeclaration] { options.toolChoice.offered(tools) }
}
