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
/// A session addresses a model that is not a `HybridModel` with only the
/// options half of its placement. A switchable model may wrap a hybrid that
/// needs both halves, so it keeps the full options itself and passes them on;
/// every leaf model reads only its own half anyway.
public final class SwitchableModel: LanguageModel {
  private let target: Mutex<any LanguageModel>
  private let options: HybridGenerationOptions

  /// A model that answers with `model` until switched.
  /// - Parameter options: The options every request is answered with.
  public init(_ model: any LanguageModel, options: HybridGenerationOptions) {
    self.target = Mutex(model)
    self.options = options
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
    try await current.respond(to: withFullOptions(request))
  }

  /// Streams from the current model.
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    current.streamResponse(to: withFullOptions(request))
  }

  private func withFullOptions(_ request: ModelRequest) -> ModelRequest {
    var request = request
    request.options = options
    return request
  }
}
