/// Two models, one preferred: the primary answers when it can, the secondary
/// when the routing rules allow.
///
/// Beyond the four inference modes, three rules are the app's to choose:
/// - `fallback`: which failures of the primary the secondary may answer
///   (`FallbackPolicy.default` is the library's rule; `.adding(.rateLimited, .serverError)`
///   falls back on a 429 or a 5xx too).
/// - `hedgeAfter`: when the primary has delivered nothing (no text, call or
///   thought) within that delay, the secondary is asked too; the first to
///   deliver answers and the other is cancelled. A cold model load counts as
///   delay, and a hedge can double the cost of a request.
/// - `continuesInterruptedAnswers`: when the answering model's stream breaks
///   after text was delivered (the connection lost, the machine offline, or
///   a failure the policy falls back on), the other model continues the same
///   answer from the text so far.
///
/// A value, so it can be stored and compared like any option, and itself a
/// `LanguageModel`, so hybrids nest: each level applies its own rules.
public struct HybridModel: LanguageModel {
  /// The model asked first.
  public let primary: any LanguageModel
  /// The model asked when the primary cannot answer.
  public let secondary: any LanguageModel
  /// Which failures of the primary the secondary may answer.
  public let fallback: FallbackPolicy
  /// How long the primary may deliver nothing before the secondary is asked
  /// too; nil (the default) never hedges. Zero or less asks both at once;
  /// more than 365 days is 365 days (every duration the library is given is
  /// clamped so before any arithmetic).
  public let hedgeAfter: Duration?
  /// Whether an answer whose stream broke after text was delivered is
  /// continued by the other model (default false: the stream ends with the error).
  public let continuesInterruptedAnswers: Bool

  /// A hybrid that asks `primary` first and `secondary` when `fallback` allows.
  /// - Parameters:
  ///   - fallback: Which failures of the primary fall back; the library's rule by default.
  ///   - hedgeAfter: Ask the secondary too when the primary has delivered
  ///     nothing within this delay; nil never hedges.
  ///   - continuesInterruptedAnswers: Continue a broken answer on the other model.
  public init(
    primary: any LanguageModel, secondary: any LanguageModel, fallback: FallbackPolicy = .default,
    hedgeAfter: Duration? = nil, continuesInterruptedAnswers: Bool = false
  ) {
    self.primary = primary
    self.secondary = secondary
    self.fallback = fallback
    self.hedgeAfter = hedgeAfter
    self.continuesInterruptedAnswers = continuesInterruptedAnswers
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

  /// Answers from the primary, or from the secondary after a failure the policy lets it fall back from.
  ///
  /// Once a tool has run in the request (`ToolRoute`), the side that answered
  /// before is asked again and nothing falls back: the tool may have had
  /// effects that must not be repeated on the other model. A hybrid that
  /// hedges or continues answers collects its own stream, so that both rules
  /// hold here as they do for `streamResponse`.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    let depth = request.routeDepth
    var request = request
    request.routeDepth += 1
    if request.route.isPinned {
      return request.route.pinnedSide(at: depth) == .secondary
        ? try await ModelCall.respond(secondary, to: request) : try await ModelCall.respond(primary, to: request)
    }
    if hedgeAfter != nil || continuesInterruptedAnswers || request.continuedAnswer != nil {
      request.routeDepth = depth
      var accumulator = ResponseAccumulator()
      for try await delta in streamResponse(to: request) { accumulator.add(delta) }
      return try accumulator.finished(by: modelVersion)
    }
    let primaryError: any Error
    let reason: FallbackReason
    var mayTrimPrimary = false
    switch primary.availability {
    case .available:
      if let remembered = rememberedPrimaryFailure(request) {
        (primaryError, reason) = remembered
        break
      }
      do {
        let asked = primaryRequest(request)
        mayTrimPrimary = asked.contextOverflow != request.contextOverflow
        let response = try await ModelCall.respond(primary, to: asked)
        request.route.record(.primary, at: depth)
        return response
      } catch {
        guard let why = fallback.fallbackReason(after: error, primaryPlacement: primary.placement) else {
          throw error
        }
        (primaryError, reason) = (error, why)
        logFallback(.failed(error), request)
      }
    case .unavailable(let unavailable):
      (primaryError, reason) = (primaryUnavailable(unavailable, request), .unavailable)
    }
    do {
      var response = try await askSecondary(after: primaryError) { [request] in
        try await ModelCall.respond(secondary, to: request)
      }
      response.fallbackReason = response.fallbackReason ?? reason
      request.route.record(.secondary, at: depth)
      return response
    } catch {
      guard mayTrimPrimary, let secondaryError = Self.leavesTrimming(primaryError, error) else { throw error }
      let response = try await askPrimaryTrimming(after: secondaryError, request) { [request] in
        try await ModelCall.respond(primary, to: request)
      }
      request.route.record(.primary, at: depth)
      return response
    }
  }

  /// Streams from the primary, falling back to the secondary only before any
  /// text was delivered (and hedging, and continuing a broken answer, as set).
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    .producing { continuation in try await streamWithFallback(request, into: continuation) }
  }

  /// The primary's remembered failure (a cloud known to be offline, or rate
  /// limited with a delay), logged as a fallback, when it is one the policy
  /// falls back from and the secondary can answer; nil to ask the primary.
  /// With no usable secondary the primary is asked anyway: a fresh attempt
  /// beats a certain failure.
  func rememberedPrimaryFailure(_ request: ModelRequest) -> (any Error, FallbackReason)? {
    guard let failure = primary.rememberedFailure, secondary.isAvailable,
      let reason = fallback.fallbackReason(after: failure, primaryPlacement: primary.placement)
    else { return nil }
    logFallback(.remembered(failure), request)
    return (failure, reason)
  }

  /// Logs the fallback from an unavailable primary and returns the error that
  /// stands for it if the secondary fails too.
  func primaryUnavailable(_ reason: UnavailableReason, _ request: ModelRequest) -> any Error {
    logFallback(.unavailable(reason), request)
    return HybridInferenceError.unavailable(model: primary.modelVersion, reason: reason)
  }

  /// Runs `body` against the secondary; when that fails too, the error says
  /// what each model failed with. Cancellation passes through unchanged.
  func askSecondary<Result>(
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

  func logFallback(
    _ reason: FallbackEvent.Reason, _ request: ModelRequest, from: String? = nil, to: String? = nil
  ) {
    let event = FallbackEvent(
      from: from ?? primary.modelVersion, to: to ?? secondary.modelVersion, reason: reason)
    request.logHandler.log(
      LogRecord(level: .warning, category: .routing, message: event.description, fallback: event))
  }

  /// Logs what a hedge did (not a fallback: no `FallbackEvent`).
  func logHedge(_ message: String, _ request: ModelRequest) {
    request.logHandler.log(LogRecord(level: .info, category: .routing, message: message))
  }
}

extension LanguageModel where Self == HybridModel {
  /// A hybrid of two models: `.hybridModel(primary: local, secondary: cloud)`
  /// prefers the device, `.hybridModel(primary: cloud, secondary: local)` the
  /// cloud. The other parameters are `HybridModel`'s.
  public static func hybridModel(
    primary: any LanguageModel, secondary: any LanguageModel, fallback: FallbackPolicy = .default,
    hedgeAfter: Duration? = nil, continuesInterruptedAnswers: Bool = false
  ) -> HybridModel {
    HybridModel(
      primary: primary, secondary: secondary, fallback: fallback, hedgeAfter: hedgeAfter,
      continuesInterruptedAnswers: continuesInterruptedAnswers)
  }
}
