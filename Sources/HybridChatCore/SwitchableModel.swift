import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import Synchronization

/// A model whose target can change between requests: what lets `/mode` switch
/// the inference mode in the middle of a chat and keep the conversation.
///
/// The session keeps the transcript and hands all of it to whichever model
/// answers, so switching the model underneath a session carries the
/// conversation over, the same way a fallback does.
///
/// Each request goes to the current model as the session made it, options
/// included: both halves travel with every request (each leaf model reads
/// its own), and the session changes them between the rounds of one request
/// (a required tool choice becomes `.auto` once the tools have answered),
/// so a copy kept here would undo that.
public final class SwitchableModel: LanguageModel {
  /// Behind a lock because `/mode` switches it from the chat loop while an
  /// answer may be reading it from another task.
  private let target: Mutex<any LanguageModel>

  /// A model that answers with `model` until switched.
  public init(_ model: any LanguageModel) {
    self.target = Mutex(model)
  }

  /// The model that answers now.
  public var current: any LanguageModel { target.withLock { $0 } }

  /// Makes `model` answer from the next request on.
  public func switchTo(_ model: any LanguageModel) {
    target.withLock { $0 = model }
  }

  /// The current model's version.
  public var modelVersion: String { current.modelVersion }
  /// The current model's placement.
  public var placement: ModelPlacement { current.placement }
  /// The current model's availability.
  public var availability: Availability { current.availability }

  /// Answers with the current model.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    try await current.respond(to: request)
  }

  /// Streams from the current model.
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    current.streamResponse(to: request)
  }
}
