/// A hedged request (`HybridModel.hedgeAfter`): the primary streams; when it
/// has delivered nothing within the delay, the secondary streams too, and the
/// first to deliver (text, or for free text also a thought or a call; a
/// complete answer counts too) is the answer. The other is cancelled at once
/// (its generation stops, not merely its output) and the race ends only once
/// both have stopped, so a hybrid's stream still ends only after all of its
/// work has.
///
/// Each side's stream is read by a task of its own ("pump") into one
/// channel, so the race can wait on either, and on the hedge's timer, at
/// once. Only the winner's deltas reach the caller; a loser's are dropped.
///
/// Failures before anyone delivered: the primary's falls back under the
/// policy as unhedged (the secondary, if already asked, simply goes on as the
/// answer), or ends the request; the secondary's is logged and the primary
/// waited for. Both failing is `bothModelsFailed`.
struct HedgeRace {
  private enum Event: Sendable {
    case delta(HybridModel.Side, GenerateContentResponse)
    case ended(HybridModel.Side, (any Error)?)
    case hedgeDue
  }

  private let hybrid: HybridModel
  private let request: ModelRequest
  /// The request as the primary gets it (`HybridModel.primaryRequest`).
  private let primaryRequest: ModelRequest
  private let delay: Duration
  private let events: AsyncStream<Event>
  private let sink: AsyncStream<Event>.Continuation
  private let structured: Bool
  private var relay: DeltaRelay
  private var pumps: [HybridModel.Side: Task<Void, Never>] = [:]
  private var checksSeam: [HybridModel.Side: Bool] = [:]
  private var pending: [HybridModel.Side: [GenerateContentResponse]] = [:]
  private var failures: [HybridModel.Side: any Error] = [:]
  private var winner: HybridModel.Side?
  private var hedged = false
  /// Why the secondary answers if it wins: a hedge, or the primary's failure.
  private var secondaryReason = FallbackReason.hedged

  init(
    hybrid: HybridModel, request: ModelRequest, primaryRequest: ModelRequest, delay: Duration,
    continuation: ResponseDeltaStream.Continuation
  ) {
    self.hybrid = hybrid
    self.request = request
    self.primaryRequest = primaryRequest
    // Clamped (`WaitLimits`): `Task.sleep` traps on a deadline past
    // `Int64.max` seconds, and a year is as good as never for a hedge.
    self.delay = WaitLimits.clamped(delay)
    (events, sink) = AsyncStream.makeStream(of: Event.self)
    structured = request.responseSchema != nil
    relay = DeltaRelay(continuation, keepsText: hybrid.continuesInterruptedAnswers)
  }

  /// Runs the race to the end of the answer's first part; every side's work
  /// has stopped when it returns or throws.
  mutating func run() async throws -> HybridModel.AnswerEnd {
    start(.primary)
    let sink = sink
    let delay = delay
    let timer = Task {
      try? await Task.sleep(for: delay)
      if !Task.isCancelled { sink.yield(.hedgeDue) }
    }
    let end: Result<HybridModel.AnswerEnd, any Error>
    do {
      end = .success(try await race())
    } catch {
      end = .failure(error)
    }
    timer.cancel()
    for pump in pumps.values { pump.cancel() }
    for pump in pumps.values { await pump.value }
    sink.finish()
    return try end.get()
  }

  private mutating func start(_ side: HybridModel.Side) {
    let model = hybrid.model(side)
    let (prepared, seam) = (side == .primary ? primaryRequest : request).prepared(for: model)
    checksSeam[side] = seam
    let sink = sink
    pumps[side] = Task {
      do {
        for try await delta in ModelCall.stream(model, to: prepared) {
          sink.yield(.delta(side, delta.placed(model.placement)))
        }
        sink.yield(.ended(side, nil))
      } catch {
        sink.yield(.ended(side, error))
      }
    }
  }

  private mutating func race() async throws -> HybridModel.AnswerEnd {
    for await event in events {
      switch event {
      case .hedgeDue:
        guard winner == nil, !hedged, failures[.primary] == nil, hybrid.secondary.isAvailable,
          hybrid.secondary.rememberedFailure == nil
        else { continue }
        hedged = true
        hybrid.logHedge(
          "hedging: \(hybrid.primary.modelVersion) delivered nothing within \(delay); "
            + "asking \(hybrid.secondary.modelVersion) too", request)
        start(.secondary)
      case .delta(let side, let delta):
        if let winner {
          if side == winner { relay.add(delta) }
          continue
        }
        pending[side, default: []].append(delta)
        if DeltaRelay.delivers(delta, structured: structured) { win(side) }
      case .ended(let side, let error):
        if let winner, side != winner { continue }
        if let error {
          if let end = try fail(side, error) { return end }
        } else {
          if winner == nil { win(side) }
          relay.finish()
          return .answered(side)
        }
      }
    }
    // The channel ends only when the task running the race is cancelled.
    throw CancellationError()
  }

  /// `side` delivered first: its deltas so far go out, the other is cancelled.
  private mutating func win(_ side: HybridModel.Side) {
    winner = side
    if side == .secondary { relay.fallbackReason = secondaryReason }
    if checksSeam[side] == true, let earlier = request.continuedAnswer { relay.checkSeam(after: earlier) }
    for delta in pending[side] ?? [] { relay.add(delta) }
    pending = [:]
    let loser: HybridModel.Side = side == .primary ? .secondary : .primary
    guard let pump = pumps[loser], failures[loser] == nil else { return }
    pump.cancel()
    if side == .secondary {
      hybrid.logFallback(.hedged(after: delay), request)
    } else {
      hybrid.logHedge(
        "hedge: \(hybrid.primary.modelVersion) delivered first; cancelled \(hybrid.secondary.modelVersion)",
        request)
    }
  }

  /// `side` failed; returns how the race ends, or nil when it goes on.
  private mutating func fail(_ side: HybridModel.Side, _ error: any Error) throws -> HybridModel.AnswerEnd? {
    if FallbackRule.isCancellation(error) { throw error }
    let other: HybridModel.Side = side == .primary ? .secondary : .primary
    if winner == side && relay.deliveredText {
      return .interrupted(side, error, relay, otherFailure: failures[other])
    }
    failures[side] = error
    if side == .primary {
      guard
        let reason = hybrid.fallback.fallbackReason(after: error, primaryPlacement: hybrid.primary.placement)
      else { throw error }
      hybrid.logFallback(.failed(error), request)
      if let secondaryError = failures[.secondary] {
        throw HybridInferenceError.bothModelsFailed(primary: error, secondary: secondaryError)
      }
      if hedged && winner == nil {
        // The secondary, asked already, is the answer now.
        secondaryReason = reason
        return nil
      }
      return .primaryFellBack(error, reason)
    }
    if winner == .secondary { throw error }
    hybrid.logHedge(
      "hedge: \(hybrid.secondary.modelVersion) failed (\(HybridInferenceError.describe(error))); "
        + "waiting for \(hybrid.primary.modelVersion)", request)
    if let primaryError = failures[.primary] {
      throw HybridInferenceError.bothModelsFailed(primary: primaryError, secondary: error)
    }
    return nil
  }
}

extension HybridModel {
  /// The primary, hedged by the secondary after `delay` (`HedgeRace`).
  func hedgedAnswer(
    _ request: ModelRequest, primaryRequest: ModelRequest, after delay: Duration,
    into continuation: ResponseDeltaStream.Continuation
  ) async throws -> AnswerEnd {
    var race = HedgeRace(
      hybrid: self, request: request, primaryRequest: primaryRequest, delay: delay, continuation: continuation)
    return try await race.run()
  }
}
