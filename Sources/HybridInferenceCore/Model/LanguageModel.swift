/// What a backend provides to a `GenerativeModelSession`.
///
/// A backend answers a `ModelRequest` (the whole transcript plus the options)
/// either at once or as a stream of deltas. It does not keep the conversation
/// itself: the session hands it every turn on every request, which is what lets
/// a conversation move between models on a fallback. A backend that wants to
/// reuse work between turns (the on-device KV cache) keeps it in
/// `ModelRequest.sessionStorage`.
///
/// Adding a backend means one new type conforming to this protocol; routing,
/// transcripts, snapshots and validation come from the library.
public protocol LanguageModel: Sendable {
  /// The name that `GenerateContentResponse.modelVersion` carries when this
  /// model answers.
  var modelVersion: String { get }

  /// Where the model runs; decides which failures a hybrid may fall back from.
  var placement: ModelPlacement { get }

  /// Whether the model can answer now. Cheap: no network and no model load.
  var availability: Availability { get }

  /// A failure the model is known to be in right now (the cloud remembered
  /// as offline), or nil. Cheap: no network, no waiting.
  ///
  /// A hybrid whose other model can answer reads it and, when it is set,
  /// goes straight to that model, logging the fallback as remembered; a
  /// model used on its own is asked anyway, so an app that has no fallback
  /// still gets a fresh attempt and a fresh error. The default is nil.
  var rememberedFailure: (any Error)? { get }

  /// How many tokens `request`'s prompt (instructions, tool declarations
  /// and every turn, as this model reads them) takes, or nil when this model
  /// cannot count. The default is nil.
  ///
  /// This is how a model takes part in `ContextOverflow.dropOldestTurns`:
  ///
  /// 1. When a request does not fit the window, throw
  ///    `HybridInferenceError.contextWindowExceeded(contextSize:tokenCount:)`
  ///    before doing any work (`contextSize` is the window, `tokenCount`
  ///    what the request needs, answer room included). `LocalSystemModel`
  ///    does.
  /// 2. Count here. The library then drops the oldest whole exchanges of
  ///    the request it gave the model (never the instructions, the tools or
  ///    the newest prompt, never a call without its output), measuring each
  ///    candidate with this method, until the prompt takes about half of
  ///    `contextSize`, and asks again; the session's transcript keeps
  ///    everything. Without a count it estimates from the text's length and
  ///    tries again while the model still refuses.
  ///
  /// A model that never throws `contextWindowExceeded` (a cloud model whose
  /// window is not known here) is never trimmed for: the policy is a no-op
  /// for it. Called only when a request has overflowed, never on the way of
  /// an ordinary request.
  func promptTokenCount(for request: ModelRequest) async throws -> Int?

  /// Answers the request in one piece.
  func respond(to request: ModelRequest) async throws -> GenerateContentResponse

  /// Answers the request as a stream of deltas, each a `GenerateContentResponse`
  /// holding only what is new. The stream ends when the answer is complete and
  /// throws on failure; terminating it cancels the generation.
  func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
}

extension LanguageModel {
  /// Whether `availability` is `.available`.
  public var isAvailable: Bool { availability.isAvailable }

  /// Nil: a model remembers no failure unless it says otherwise.
  public var rememberedFailure: (any Error)? { nil }

  /// Nil: a model cannot count unless it says otherwise.
  public func promptTokenCount(for request: ModelRequest) async throws -> Int? { nil }

  /// Collects the stream, for backends that only stream.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    var accumulator = ResponseAccumulator()
    for try await delta in streamResponse(to: request) {
      accumulator.add(delta)
    }
    return try accumulator.finished(by: modelVersion)
  }
}

/// Where a model runs.
public enum ModelPlacement: Sendable, Hashable {
  /// On this machine: any failure of its own is a reason to try the cloud.
  case onDevice
  /// Behind the network: only being offline is a reason to try the device.
  case cloud
}
