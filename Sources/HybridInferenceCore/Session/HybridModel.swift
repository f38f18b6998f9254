/// Two models, one preferred: the primary answers when it can, the secondary
/// when the routing rules allow (see `FallbackRule`).
///
/// A value, so it can be stored and compared like any option, and itself a
/// `LanguageModel`, so hybrids nest.
public struct HybridModel: LanguageModel {
  /// The model asked first.
  public let primary: any LanguageModel
  /// The model asked when the primary cannot answer.
  public let secondary: any LanguageModel

  /// A hybrid that asks `primary` first and `secondary` when the routing rules allow.
  public init(primary: any LanguageModel, secondary: any LanguageModel) {
    self.primary = primary
    self.secondary = secondary
  }

  /// Names both models, primary first.
  public var modelVersion: String { "hybrid(\(primary.modelVersion), \(secondary.modelVersion))" }

  /// The primary's placement: it sets which failures fall back.
  public var placement: ModelPlacement { primary.placement }

  /// Available when either model is; otherwise the primary's reason.
  public var availability: Availability {
    let primaryAvailability = primary.availability
    if primaryAvailability.isAvailable { return .available }
    return secondary.isAvailable ? .available : primaryAvailability
  }

  /// The primary's remembered failure when both models have one: only then
  /// is this hybrid as a whole known to fail.
  public var rememberedFailure: (any Error)? {
    guard let failure = primary.rememberedFailure, secondary.rememberedFailure != nil else { return nil }
    return failure
  }

  /// Answers from the primary, or from the secondary after a failure the rules let it fall back from.
  ///
  /// Once a tool has run in the request (`ToolRoute`), the side that answered
  /// before is asked again and nothing falls back: the tool may have had
  /// effects that must not be repeated on the other model.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    let depth = request.routeDepth
    var request = request
    request.routeDepth += 1
    if request.route.isPinned {
      return request.route.pinnedSide(at: depth) == .secondary
        ? try await secondary.respond(to: request) : try await primary.respond(to: request)
    }
    let primaryError: any Error
    switch primary.availability {
    case .available:
      if let remembered = rememberedPrimaryFailure(request) {
        primaryError = remembered
        break
      }
      do {
        let response = try await primary.respond(to: request)
        request.route.record(.primary, at: depth)
        return response
      } catch {
        guard FallbackRule.allowsFallback(after: error, primaryPlacement: primary.placement) else {
          throw error
        }
        primaryError = error
        logFallback(.failed(error), request)
      }
    case .unavailable(let reason):
      primaryError = primaryUnavailable(reason, request)
    }
    let response = try await askSecondary(after: primaryError) { [request] in
      try await secondary.respond(to: request)
    }
    request.route.record(.secondary, at: depth)
    return response
  }

  /// Streams from the primary, falling back to the secondary only before any text was delivered.
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    .producing { continuation in try await streamWithFallback(request, into: continuation) }
  }

  /// Streams from the primary; falls back only while no text has reached the
  /// caller. Deltas without text (usage, metadata) are held back until the
  /// first text so that a failure right after them can still fall back.
  private func streamWithFallback(
    _ request: ModelRequest,
    into continuation: ResponseDeltaStream.Continuation
  ) async throws {
    let depth = request.routeDepth
    var request = request
    request.routeDepth += 1
    if request.route.isPinned {
      let side = request.route.pinnedSide(at: depth) == .secondary ? secondary : primary
      for try await delta in side.streamResponse(to: request) { continuation.yield(delta) }
      return
    }
    let primaryError: any Error
    switch primary.availability {
    case .available:
      if let remembered = rememberedPrimaryFailure(request) {
        primaryError = remembered
        break
      }
      var heldBack: [GenerateContentResponse] = []
      var deliveredText = false
      do {
        for try await delta in primary.streamResponse(to: request) {
          if deliveredText {
            continuation.yield(delta)
          } else if delta.text.isEmpty && delta.thoughtText.isEmpty {
            heldBack.append(delta)
          } else {
            deliveredText = true
            for held in heldBack { continuation.yield(held) }
            heldBack.removeAll()
            continuation.yield(delta)
          }
        }
        for held in heldBack { continuation.yield(held) }
        request.route.record(.primary, at: depth)
        return
      } catch {
        guard !deliveredText,
          FallbackRule.allowsFallback(after: error, primaryPlacement: primary.placement)
        else { throw error }
        primaryError = error
        logFallback(.failed(error), request)
      }
    case .unavailable(let reason):
      primaryError = primaryUnavailable(reason, request)
    }
    try await askSecondary(after: primaryError) { [request] in
      for try await delta in secondary.streamResponse(to: request) {
        continuation.yield(delta)
      }
    }
    request.route.record(.secondary, at: depth)
  }

  /// The primary's remembered failure (a cloud known to be offline), logged
  /// as a fallback, when it is one the rules fall back from and the
  /// secondary can answer; nil to ask the primary. With no usable secondary
  /// the primary is asked anyway: a fresh attempt beats a certain failure.
  private func rememberedPrimaryFailure(_ request: ModelRequest) -> (any Error)? {
    guard let failure = primary.rememberedFailure, secondary.isAvailable,
      FallbackRule.allowsFallback(after: failure, primaryPlacement: primary.placement)
    else { return nil }
    logFallback(.remembered(failure), request)
    return failure
  }

  /// Logs the fallback from an unavailable primary and returns the error that
  /// stands for it if the secondary fails too.
  private func primaryUnavailable(_ reason: UnavailableReason, _ request: ModelRequest) -> any Error {
    logFallback(.unavailable(reason), request)
    return HybridInferenceError.unavailable(model: primary.modelVersion, reason: reason)
  }

  /// Runs `body` against the secondary; when that fails too, the error says
  /// what each model failed with. Cancellation passes through unchanged.
  private func askSecondary<Result>(
    after primaryError: any Error, _ body: () async throws -> Result
  ) async throws -> Result {
    do {
      if case .unavailable(let reason) = secondary.availability {
        throw HybridInferenceError.unavailable(model: secondary.modelVersion, reason: reason)
      }
      return try await body()
    } catch {
      if FallbackRule.isCancellation(error) { throw error }
      throw HybridInferenceError.bothModelsFailed(primary: primaryError, secondary: error)
    }
  }

  private func logFallback(_ reason: FallbackEvent.Reason, _ request: ModelRequest) {
    let event = FallbackEvent(from: primary.modelVersion, to: secondary.modelVersion, reason: reason)
    request.logHandler.log(
      LogRecord(level: .warning, category: .routing, message: event.description, fallback: event))
  }
}

extension LanguageModel where Self == HybridModel {
  /// A hybrid of two models: `.hybridModel(primary: local, secondary: cloud)`
  /// prefers the device, `.hybridModel(primary: cloud, secondary: local)` the cloud.
  public static func hybridModel(primary: any LanguageModel, secondary: any LanguageModel)
    -> HybridModel
  {
    HybridModel(primary: primary, secondary: secondary)
  }
}
