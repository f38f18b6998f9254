import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

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
  /// `--image` files, sent with the next prompt only.
  private var pendingAttachments: [Attachment]
  /// The mode the next answer is asked in.
  private(set) var mode: InferenceMode

  init(
    catalog: ModelCatalog, mode: InferenceMode, model: any LanguageModel, options: ChatOptions,
    logHandler: LogHandler, recorder: FallbackRecorder, terminal: Terminal,
    firstAttachments: [Attachment] = []
  ) {
    self.catalog = catalog
    self.options = options
    self.logHandler = logHandler
    self.terminal = terminal
    self.answerer = Answerer(terminal: terminal, options: options, recorder: recorder)
    self.mode = mode
    self.pendingAttachments = firstAttachments
    self.model = SwitchableModel(model)
    self.session = Self.makeSession(self.model, options, logHandler)
  }

  /// Answers `prompt` and prints the answer and its report; the first
  /// prompt carries the `--image` files, whatever becomes of it.
  func answer(_ prompt: String) async throws {
    let attachments = pendingAttachments
    pendingAttachments = []
    try await answerer.answer(Prompt(prompt, attachments: attachments), session: session, mode: mode)
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
