/// Everything a backend needs to answer one turn.
public struct ModelRequest: Sendable {
  /// The instructions and every turn so far, ending with the new prompt.
  public var transcript: Transcript
  /// The options; a backend reads only its own half.
  public var options: HybridGenerationOptions
  /// Per-session storage a backend may use to keep work between turns.
  public let conversation: ConversationState
  /// Where the backend reports what it does.
  public let logHandler: LogHandler

  /// A request; a backend under test can be given one directly.
  public init(
    transcript: Transcript, options: HybridGenerationOptions = .default,
    conversation: ConversationState = ConversationState(), logHandler: LogHandler = .silent
  ) {
    self.transcript = transcript
    self.options = options
    self.conversation = conversation
    self.logHandler = logHandler
  }

  /// The request as `model` should see it: a leaf model gets only its own half
  /// of the options, so settings can never leak from one model to the other.
  func addressed(to model: any LanguageModel) -> ModelRequest {
    if model is HybridModel { return self }
    var request = self
    request.options = options.scoped(to: model.placement)
    return request
  }
}
