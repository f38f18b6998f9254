/// One streamed request of a session, driven by its caller: each `next()`
/// pulls the backend's deltas until there is a snapshot to return, runs the
/// tool rounds in between, and records the turn at the end.
///
/// Pull, not push, so that a delta costs what it adds. A snapshot is made
/// only when the caller asks for one: the session never runs ahead of a slow
/// caller holding a snapshot (a copy of the text) per delta, which made time
/// and memory quadratic in the answer's length. And the text a snapshot
/// shares is by then referenced by the turn alone (the caller has dropped the
/// previous snapshot), so the next delta appends to it in place.
///
/// The session's one-request slot is released when the backend's work has
/// ended, never merely when the caller stops listening: at the end of the
/// stream and on a failure (a backend's delta stream ends only once its
/// backend has stopped, and tools run in a task group that has ended), and
/// when the caller drops the iterator early, by a task that waits for the
/// backend, cancelled by the drop, to stop.
///
/// Not `Sendable`: one caller iterates it, as any async iterator.
final class StreamedTurn {
  private let session: GenerativeModelSession
  private let ticket: UInt64
  private let schema: GenerationSchema?
  private var request: ModelRequest
  private var rounds: ToolRounds
  private var text: TurnText
  private let hasTools: Bool
  /// With a schema and tools, a round's text shows only once the round has
  /// ended without calls: the answer must be the final round's JSON, and
  /// until a round ends it may still call a tool.
  private let holdsBackRounds: Bool

  /// The current round: its deltas, its backend's work, what it said so far.
  private var deltas: ResponseDeltaStream.AsyncIterator?
  /// The round's request as the model was sent it (`OverflowTrimming`).
  private var attempt: OverflowTrimming.Attempt?
  private var accumulator = ResponseAccumulator()
  private var lastDeltaShown = false
  private var finished = false

  /// The complete answer, once the stream has ended (for `collect()`).
  private(set) var completed: ResponseStream.Snapshot?

  init(session: GenerativeModelSession, request: ModelRequest, ticket: UInt64, schema: GenerationSchema?) {
    self.session = session
    self.request = request
    self.ticket = ticket
    self.schema = schema
    self.rounds = ToolRounds(tools: session.runnableTools, options: request.options)
    self.text = TurnText(keepsEarlierRounds: schema == nil)
    self.hasTools = !session.runnableTools.isEmpty
    self.holdsBackRounds = schema != nil && hasTools
  }

  deinit {
    guard !finished else { return }
    // Dropped early: the deltas' iterator goes with this object, which
    // cancels the backend; the slot is the session's again once it stopped.
    let session = session
    let ticket = ticket
    if let work = deltas?.work, !work.hasEnded {
      Task {
        await work.waitUntilEnded()
        session.end(ticket)
      }
    } else {
      session.end(ticket)
    }
  }

  /// The next snapshot, or nil once the turn is complete and recorded.
  func next() async throws -> ResponseStream.Snapshot? {
    guard !finished else { return nil }
    do {
      return try await advance()
    } catch {
      finish()
      throw error
    }
  }

  private enum RoundEnd {
    case nextRound
    case finished(ResponseStream.Snapshot?)
  }

  private func advance() async throws -> ResponseStream.Snapshot? {
    if deltas == nil { startRound() }
    while var iterator = deltas {
      let delta: GenerateContentResponse?
      do {
        delta = try await iterator.next()
      } catch {
        // A model refuses a request too long for it before it answers: the
        // round starts again with a trimmed one, if the session allows it.
        guard accumulator.response == nil, let attempt,
          let next = try await OverflowTrimming.retry(after: error, attempt, on: session.model)
        else { throw error }
        ask(next)
        continue
      }
      deltas = iterator
      if let delta {
        if let snapshot = add(delta) { return snapshot }
        continue
      }
      switch try await endRound() {
      case .nextRound: startRound()
      case .finished(let snapshot): return snapshot
      }
    }
    return nil
  }

  private func startRound() {
    ask(OverflowTrimming.prepared(request, for: session.model))
    accumulator = ResponseAccumulator()
    text.startRound()
    lastDeltaShown = false
  }

  /// Starts the model on `attempt`.
  private func ask(_ attempt: OverflowTrimming.Attempt) {
    self.attempt = attempt
    deltas = session.model.streamResponse(to: attempt.sent).makeAsyncIterator()
  }

  /// Adds a delta; returns the snapshot to show for it, if any. With tools,
  /// nothing shows once the round has asked for a call (its later deltas
  /// are not an answer), nor while there is no text at all.
  private func add(_ delta: GenerateContentResponse) -> ResponseStream.Snapshot? {
    text.append(accumulator.add(delta.placed(session.model.placement)))
    let shows =
      !holdsBackRounds && (!hasTools || (!accumulator.hasFunctionCalls && !text.text.isEmpty))
    lastDeltaShown = shows
    guard shows, let raw = accumulator.response else { return nil }
    return ResponseStream.Snapshot(content: text.text, rawResponse: raw)
  }

  /// The round's deltas have ended (and so has its backend's work): runs its
  /// tools and goes on, or checks and records the answer.
  private func endRound() async throws -> RoundEnd {
    deltas = nil
    guard let raw = accumulator.response else {
      throw HybridInferenceError.malformedResponse("the model ended without a response")
    }
    try Task.checkCancellation()
    if try await session.runTools(of: raw, in: &request, rounds: &rounds) { return .nextRound }
    if let schema { _ = try schema.check(raw.text) }
    session.record(raw, for: request, ticket: ticket)
    finish()
    let final = ResponseStream.Snapshot(content: text.text, rawResponse: raw)
    completed = final
    // The last snapshot always carries the complete response.
    return .finished(lastDeltaShown ? nil : final)
  }

  /// The backend's work has ended: the slot is the session's again.
  private func finish() {
    finished = true
    deltas = nil
    session.end(ticket)
  }
}
