import HybridChatCore
import HybridInference

/// The session the command talks to, with its current mode.
///
/// The session holds a `SwitchableModel`, so `/mode` changes which model
/// answers without losing the conversation; `/reset` starts a new session.
/// An actor, so an answer can run in its own task and be cancelled by Ctrl-C.
actor ChatSession {
  private let catalog: ModelCatalog
  private let options: ChatOptions
  private let logHandler: LogHandler
  private let answerer: Answerer
  private let terminal: Terminal
  private let model: SwitchableModel
  private var session: GenerativeModelSession
  /// The mode the next answer is asked in.
  private(set) var mode: InferenceMode

  init(
    catalog: ModelCatalog, mode: InferenceMode, model: any LanguageModel, options: ChatOptions,
    logHandler: LogHandler, recorder: FallbackRecorder, terminal: Terminal
  ) {
    self.catalog = catalog
    self.options = options
    self.logHandler = logHandler
    self.terminal = terminal
    self.answerer = Answerer(terminal: terminal, options: options, recorder: recorder)
    self.mode = mode
    self.model = SwitchableModel(model)
    self.session = Self.makeSession(self.model, options, logHandler)
  }

  /// Answers `prompt` and prints the answer and its report.
  func answer(_ prompt: String) async throws {
    try await answerer.answer(prompt, session: session, mode: mode)
  }

  /// Forgets the conversation (the system instructions stay).
  func reset() {
    session = Self.makeSession(model, options, logHandler)
  }

  /// Switches to `newMode` for the following answers; throws, and keeps the
  /// current mode, when the new mode has no model that can answer.
  func switchMode(to newMode: InferenceMode) async throws(CommandError) {
    let newModel = try catalog.model(for: newMode)
    try await ModelPreparation.prepare(catalog, for: newMode, terminal: terminal)
    model.switchTo(newModel)
    mode = newMode
  }

  private static func makeSession(
    _ model: SwitchableModel, _ options: ChatOptions, _ logHandler: LogHandler
  ) -> GenerativeModelSession {
    GenerativeModelSession(
      model: model, instructions: options.systemInstructions, tools: options.tools.map(\.tool),
      logHandler: logHandler)
  }
}
