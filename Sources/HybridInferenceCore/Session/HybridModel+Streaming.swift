/// A hybrid's stream: fall back before the first text (the Architecture
/// article, "Routing rules"), hedge
/// when the primary is slow (`HedgeRace`), and continue a broken answer on
/// the other model.
extension HybridModel {
  typealias Side = ToolRoute.Side

  func model(_ side: Side) -> any LanguageModel { side == .primary ? primary : secondary }

  /// How the first part of a streamed answer ended.
  enum AnswerEnd {
    /// That side's answer is complete.
    case answered(Side)
    /// The primary failed before it delivered any text, with a failure the
    /// policy falls back on (logged already).
    case primaryFellBack(any Error, FallbackReason)
    /// The answering side's stream broke after it delivered text; `relay`
    /// holds what was delivered, `otherFailure` what the other side failed
    /// with in this request, if it did.
    case interrupted(Side, any Error, DeltaRelay, otherFailure: (any Error)?)
  }

  /// Streams from the primary (hedged after `hedgeAfter`); falls back only
  /// while no text has reached the caller, and continues an answer that
  /// broke after text on the other model when `continuesInterruptedAnswers`.
  func streamWithFallback(
    _ request: ModelRequest,
    into continuation: ResponseDeltaStream.Continuation
  ) async throws {
    let depth = request.routeDepth
    var request = request
    request.routeDepth += 1
    if request.route.isPinned {
      let side = request.route.pinnedSide(at: depth) == .secondary ? secondary : primary
      for try await delta in ModelCall.stream(side, to: request) { continuation.yield(delta.placed(side.placement)) }
      return
    }
    let primaryError: any Error
    let reason: FallbackReason
    let asked = primaryRequest(request)
    let mayTrimPrimary = asked.contextOverflow != request.contextOverflow
    switch primary.availability {
    case .available:
      if let remembered = rememberedPrimaryFailure(request) {
        (primaryError, reason) = remembered
        break
      }
      let end: AnswerEnd
      if let hedgeAfter {
        end = try await hedgedAnswer(request, primaryRequest: asked, after: hedgeAfter, into: continuation)
      } else {
        end = try await answerFromPrimary(asked, into: continuation)
      }
      switch end {
      case .answered(let side):
        request.route.record(side, at: depth)
        return
      case .primaryFellBack(let error, let why):
        (primaryError, reason) = (error, why)
      case .interrupted(let side, let error, let relay, let otherFailure):
        try await continueAnswer(
          of: side, brokenBy: error, relay, otherFailure: otherFailure, request, depth: depth,
          into: continuation)
        return
      }
    case .unavailable(let unavailable):
      (primaryError, reason) = (primaryUnavailable(unavailable, request), .unavailable)
    }
    var relay = DeltaRelay(continuation, keepsText: false, fallbackReason: reason)
    do {
      try await askSecondary(after: primaryError) { [request] in try await relay.relay(secondary, request) }
      request.route.record(.secondary, at: depth)
    } catch {
      guard mayTrimPrimary, !relay.deliveredText, let secondaryError = Self.leavesTrimming(primaryError, error)
      else { throw error }
      try await askPrimaryTrimming(after: secondaryError, request) { [request] in
        var again = DeltaRelay(continuation, keepsText: false)
        try await again.relay(primary, request)
      }
      request.route.record(.primary, at: depth)
    }
  }

  /// The primary alone, unhedged.
  private func answerFromPrimary(
    _ request: ModelRequest, into continuation: ResponseDeltaStream.Continuation
  ) async throws -> AnswerEnd {
    var relay = DeltaRelay(continuation, keepsText: continuesInterruptedAnswers)
    do {
      try await relay.relay(primary, request)
      return .answered(.primary)
    } catch {
      if relay.deliveredText { return .interrupted(.primary, error, relay, otherFailure: nil) }
      guard let reason = fallback.fallbackReason(after: error, primaryPlacement: primary.placement) else {
        throw error
      }
      logFallback(.failed(error), request)
      return .primaryFellBack(error, reason)
    }
  }

  /// The answer of `side` broke after text: the other side continues it
  /// from the text so far, when this hybrid continues answers and the
  /// failure is one that allows it; otherwise the failure ends the stream.
  ///
  /// Never for a structured answer (a second model cannot be trusted to
  /// continue JSON to the schema byte for byte), a blocked one, a
  /// cancellation, an answer that asked for a tool, or after a tool ran (the
  /// pinned path never gets here); nor onto a model that already failed in
  /// this request, or one unavailable or remembered failing.
  private func continueAnswer(
    of side: Side, brokenBy error: any Error, _ relay: DeltaRelay, otherFailure: (any Error)?,
    _ request: ModelRequest, depth: Int, into continuation: ResponseDeltaStream.Continuation
  ) async throws {
    let broken = model(side)
    let otherSide: Side = side == .primary ? .secondary : .primary
    let other = model(otherSide)
    if let otherFailure {
      throw side == .primary
        ? HybridInferenceError.bothModelsFailed(primary: error, secondary: otherFailure)
        : HybridInferenceError.bothModelsFailed(primary: otherFailure, secondary: error)
    }
    guard continuesInterruptedAnswers, request.responseSchema == nil, !relay.hasFunctionCalls,
      !relay.text.isEmpty, other.isAvailable, other.rememberedFailure == nil,
      let reason = Self.interruptionReason(error, placement: broken.placement, fallback: fallback)
    else { throw error }
    let begunBy = relay.modelVersion.isEmpty ? broken.modelVersion : relay.modelVersion
    logFallback(.interrupted(error), request, from: begunBy, to: other.modelVersion)
    var next = request
    next.continuedAnswer = (request.continuedAnswer ?? "") + relay.text
    var rest = DeltaRelay(continuation, keepsText: false, fallbackReason: reason, continuedFrom: begunBy)
    do {
      try await rest.relay(other, next)
    } catch let secondError {
      if FallbackRule.isCancellation(secondError) { throw secondError }
      throw side == .primary
        ? HybridInferenceError.bothModelsFailed(primary: error, secondary: secondError)
        : HybridInferenceError.bothModelsFailed(primary: secondError, secondary: error)
    }
    request.route.record(otherSide, at: depth)
  }

  /// The reason a stream that broke with `error` after text may be
  /// continued: the connection lost (or the stream cut short), the machine
  /// offline, or a failure `fallback` falls back on; nil for anything else,
  /// a cancellation and a blocked answer above all.
  static func interruptionReason(
    _ error: any Error, placement: ModelPlacement, fallback: FallbackPolicy
  ) -> FallbackReason? {
    switch error as? HybridInferenceError {
    case .promptBlocked?, .responseStopped?: return nil
    default: break
    }
    guard let reason = FallbackReason(classifying: error, primaryPlacement: placement) else { return nil }
    return reason == .offline || reason == .connectionLost || fallback.contains(reason) ? reason : nil
  }
}

extension DeltaRelay {
  /// Streams `model`'s answer to `request` (as `prepared(for:)` makes it for
  /// that model) through this relay; throws what the stream throws.
  mutating func relay(_ model: any LanguageModel, _ request: ModelRequest) async throws {
    let (prepared, checksSeam) = request.prepared(for: model)
    if checksSeam, let earlier = request.continuedAnswer { checkSeam(after: earlier) }
    for try await delta in ModelCall.stream(model, to: prepared) { add(delta.placed(model.placement)) }
    finish()
  }
}

extension ModelRequest {
  /// What a cloud model is asked after the partial answer, as a user turn:
  /// Gemini refuses a request that ends with a model turn.
  static let continuationPrompt =
    "Your previous answer was cut off. Continue it exactly where it stopped: do not repeat any of it, "
    + "do not comment, just write the rest."

  /// This request as `model` is to get it. A continuation
  /// (`continuedAnswer`) stays one for a model on device, which prefills the
  /// partial answer, and for a hybrid, which prepares it for whichever of
  /// its models it asks; a cloud model gets the partial answer as its own
  /// turn followed by a user turn asking it to continue, and the seam is to
  /// be checked for repeated words (`checksSeam`).
  func prepared(for model: any LanguageModel) -> (request: ModelRequest, checksSeam: Bool) {
    guard let partial = continuedAnswer, !(model is HybridModel), model.placement == .cloud else {
      return (self, false)
    }
    var request = self
    request.continuedAnswer = nil
    request.transcript.entries.append(
      .response(Content(role: Transcript.Entry.Role.model.rawValue, text: partial), modelVersion: ""))
    request.transcript.entries.append(.prompt(Self.continuationPrompt))
    return (request, true)
  }
}
