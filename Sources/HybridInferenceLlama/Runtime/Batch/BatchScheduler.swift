import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// The scheduler of a `BatchedContext`: while any turn is queued or running,
/// it admits queued turns onto free sequences, builds one batch (the pending
/// token of every decoding turn, then prefill chunks to fill the batch's
/// room, so a long prompt advances a chunk per step instead of stalling the
/// others), decodes it in one `llama_decode`, and samples each turn from its
/// own logits with its own sampler.
extension BatchedContext {
  /// One turn's share of a step: how many of its tokens the batch carries.
  private struct Entry {
    let turn: SequenceTurn
    let count: Int
  }

  /// Runs steps until no turn is left. Called on a compute lane, with the
  /// scheduler marked running.
  func runScheduler() {
    LlamaBackend.inFlight.enter()
    defer { LlamaBackend.inFlight.leave() }
    while true {
      // Each step: growing swaps the context between steps (and, out of
      // memory, may leave none: then this makes it again or fails the turns).
      let context: OpaquePointer
      do {
        context = try created()
      } catch {
        failEverything(error)
        return
      }
      guard let memory = llama_get_memory(context) else {
        failEverything(HybridInferenceError.generationFailed("the llama context has no memory"))
        return
      }
      let window = Self.window(of: settings)
      if active.isEmpty { awaitAnnouncedTurns() }
      if !admitQueued(window: window) { continue }
      for turn in active where isCancelled(turn) { finish(turn, .failure(CancellationError())) }
      for turn in active where lostItsMedia(turn) { finish(turn, .failure(Self.mediaLost)) }
      if active.isEmpty {
        let done = state.withLock { state in
          if state.queue.isEmpty { state.running = false }
          return !state.running
        }
        if done { return }
        continue
      }
      if growForNextStep() { continue }
      step(context: context, memory: memory, window: window)
    }
  }

  /// The context and its memory as they are now.
  func current() throws(HybridInferenceError) -> (OpaquePointer, llama_memory_t) {
    let context = try created()
    guard let memory = llama_get_memory(context) else { throw .generationFailed("the llama context has no memory") }
    return (context, memory)
  }

  func isCancelled(_ turn: SequenceTurn) -> Bool {
    turn.flag.isSet || LlamaBackend.inFlight.isStopping
  }

  /// Gives free sequences to the first queued turns and prepares their
  /// caches. Returns false when the context was made again (grown to more
  /// sequences first, or to more cells for a turn's prompt): the caller
  /// reads the new one.
  private func admitQueued(window: Int) -> Bool {
    if growIfWaiting() { return false }
    let before = creation.withLock { pointer }
    let admitted = state.withLock { state -> [(SequenceTurn, SequenceSlots.Lease)] in
      var admitted: [(SequenceTurn, SequenceSlots.Lease)] = []
      while let first = state.queue.first, let lease = state.slots.lease(for: first.request.owner) {
        admitted.append((state.queue.removeFirst(), lease))
      }
      return admitted
    }
    for (turn, lease) in admitted {
      turn.sequence = lease.sequence
      active.append(turn)
      do {
        try prepare(turn, changedHands: lease.changedHands, window: window)
      } catch {
        finish(turn, .failure(error))
      }
    }
    return creation.withLock { pointer } == before
  }

  /// Keeps what the turn may reuse of its sequence's cache, checks that the
  /// turn fits the window, fits the cache to hold it, and makes its sampler.
  private func prepare(_ turn: SequenceTurn, changedHands: Bool, window: Int) throws {
    let prompt = turn.prompt
    var (context, memory) = try current()
    // First, before anything can fail: a sequence from another session keeps
    // at most the instructions, even for a turn that is then refused.
    if changedHands { caches[turn.sequence].keepInstructions(ifSharedWith: prompt, in: memory) }
    // Room for the answer: what the caller asked for, else a quarter of the
    // window up to 256 tokens. A limit no window of this size could hold
    // (`.max`) cannot be reserved: it means "until the window is full", with
    // the default room. A conversation that no longer fits is an error,
    // never silently truncated, so a hybrid can hand it to the cloud.
    let defaultReserve = min(256, window / 4)
    let reserve = turn.request.maximumResponseTokens.map { $0 < window ? $0 : defaultReserve } ?? defaultReserve
    guard prompt.count + reserve <= window else {
      throw HybridInferenceError.contextWindowExceeded(contextSize: window, tokenCount: prompt.count + reserve)
    }
    if let media = turn.request.media {
      try prefillMedia(turn, chunks: media, reserve: reserve, window: window)
      return
    }
    turn.reusedTokens = caches[turn.sequence].keepCachedPrefix(of: prompt, in: memory)
    // Fitted once the prefix is kept (a new conversation keeps little of a
    // long one's cells, and only kept cells move); the prefix is kept again
    // after, since cells that did not move are gone.
    if fitWindow(toHold: prompt.count + reserve, depth: prompt.count) {
      (context, memory) = try current()
      turn.reusedTokens = caches[turn.sequence].keepCachedPrefix(of: prompt, in: memory)
    }
    turn.unDecoded = prompt[turn.reusedTokens...]
    loadSavedPrefix(turn, context: context, memory: memory)
    turn.sampler = try turn.request.sampler()
  }

  /// One batch: build, decode, record, sample.
  private func step(context: OpaquePointer, memory: llama_memory_t, window: Int) {
    let entries = fillBatch()
    state.withLock { state in
      state.steps.count += 1
      state.steps.widest = max(state.steps.widest, entries.count)
    }
    // Only steps that prefill can be aborted (see `setAbortCallback`).
    let prefills = entries.contains { $0.count > 1 }
    if prefills {
      stepFlags = entries.map(\.turn.flag)
      setAbortCallback(context, enabled: true)
    }
    let status = llama_decode(context, batch)
    if prefills { setAbortCallback(context, enabled: false) }
    if let moved = hugePages.finish() { HugePageMove.log(moved, reason: settings.memory.reason) }
    guard status == 0 else {
      if status == 2 { state.withLock { $0.steps.aborted += 1 } }
      let error = failure(status, entries: entries, window: window)
      for entry in entries {
        caches[entry.turn.sequence].dropUnrecorded(in: memory)
        finish(entry.turn, .failure(error))
      }
      return
    }
    for entry in entries {
      let turn = entry.turn
      caches[turn.sequence].append(turn.unDecoded.prefix(entry.count))
      turn.unDecoded.removeFirst(entry.count)
      guard let index = turn.logitsIndex else { continue }
      if !turn.answering {
        turn.answering = true
        caches[turn.sequence].shareablePrefix = turn.request.shareableTokens
      }
      sample(turn, at: index, context: context, window: window)
    }
    deliverText()
    for entry in entries where active.contains(where: { $0 === entry.turn }) { saveIfDue(entry.turn, context: context) }
  }

  /// Hands each answering turn its new text: every step while one turn runs
  /// (a lone stream delivers every token), every `deliveryInterval` steps
  /// while several do. Each delivery wakes a consumer task, and four of them
  /// waking every step on the cores the decode runs on cost a few percent of
  /// four sessions' tokens/s; every fourth step is still a delivery per ~0.1 s.
  private func deliverText() {
    deliveryClock += 1
    guard active.count == 1 || deliveryClock % Self.deliveryInterval == 0 else { return }
    for turn in active { turn.deliver() }
  }

  /// Steps between deliveries while several turns answer.
  static var deliveryInterval: Int { 4 }

  /// Puts every answering turn's next token in the batch, then as much of
  /// the other turns' tokens as fits, turn by turn; in the order of their
  /// sequence ids, because llama.cpp splits a batch wherever the ids stop
  /// being consecutive. A turn's last token asks for logits.
  private func fillBatch() -> [Entry] {
    var entries: [Entry] = []
    var room = settings.batchSize
    for turn in active where turn.unDecoded.count == 1 {
      entries.append(Entry(turn: turn, count: 1))
      room -= 1
    }
    for turn in active where turn.unDecoded.count > 1 && room > 0 {
      // A chunk ends at the turn's next prompt cache save point.
      let chunk = min(room, turn.unDecoded.count, tokensBeforeSavePoint(turn) ?? .max)
      entries.append(Entry(turn: turn, count: chunk))
      room -= chunk
    }
    entries.sort { $0.turn.sequence < $1.turn.sequence }
    var count = 0
    for entry in entries {
      let turn = entry.turn
      let base = caches[turn.sequence].tokens.count
      let wantsLogits = entry.count == turn.unDecoded.count
      turn.logitsIndex = wantsLogits ? Int32(count + entry.count - 1) : nil
      for (offset, token) in turn.unDecoded.prefix(entry.count).enumerated() {
        batch.token[count] = token
        batch.pos[count] = llama_pos(base + offset)
        batch.n_seq_id[count] = 1
        batch.seq_id[count]?[0] = llama_seq_id(turn.sequence)
        batch.logits[count] = wantsLogits && offset == entry.count - 1 ? 1 : 0
        count += 1
      }
    }
    batch.n_tokens = Int32(count)
    return entries
  }

  /// Samples the next token for `turn` from the logits at `index`, and
  /// finishes the turn when its answer is complete.
  ///
  /// A turn that reaches its token limit finishes as the last token is
  /// sampled, as llama-server's slots do: decoding that token would cost a
  /// step of the whole batch for logits nobody reads (with four sessions of
  /// 64 tokens, 65 steps instead of 64). The sequence's cache then holds the
  /// answer but its last token, which the session's next turn prefills.
  func sample(_ turn: SequenceTurn, at index: Int32, context: OpaquePointer, window: Int) {
    let limit = turn.request.maximumResponseTokens ?? (window - turn.prompt.count)
    if turn.generatedTokens >= limit || caches[turn.sequence].tokens.count >= window {
      saveIfDue(turn, context: context)
      finish(turn, .success(turn.outcome(.maxTokens)))
      return
    }
    guard let sampler = turn.sampler else { return }
    do {
      let token = try sampler.sample(context, at: index)
      if let reason = turn.accept(token, model: model) ?? (turn.generatedTokens >= limit ? .maxTokens : nil) {
        saveIfDue(turn, context: context)
        finish(turn, .success(turn.outcome(reason)))
      }
    } catch {
      finish(turn, .failure(error))
    }
  }

  /// The error a failed step gives every turn in it.
  private func failure(_ status: Int32, entries: [Entry], window: Int) -> any Error {
    if status == 2 || LlamaBackend.inFlight.isStopping { return CancellationError() }
    if status == 1 {
      let largest = entries.map { caches[$0.turn.sequence].tokens.count + $0.count }.max() ?? 0
      let cells = creation.withLock { self.cells }
      if cells < window {
        return HybridInferenceError.generationFailed(
          "llama.cpp could not grow the KV cache past \(cells) tokens for \(largest) (out of memory?)")
      }
      return HybridInferenceError.contextWindowExceeded(contextSize: window, tokenCount: largest)
    }
    return HybridInferenceError.generationFailed("llama_decode returned \(status)")
  }

  /// Ends `turn` with `result`: the text it sampled is handed over (all of
  /// it on success; on a failure what was whole, as a stream would have shown
  /// it; nothing to a cancelled caller), its sequence goes back to the slots,
  /// and its caller resumes.
  private func finish(_ turn: SequenceTurn, _ result: Result<GenerationOutcome, any Error>) {
    switch result {
    case .success: turn.flushText()
    case .failure(let error) where !(error is CancellationError): turn.deliver()
    case .failure: break
    }
    active.removeAll { $0 === turn }
    turn.sampler = nil
    let continuation = state.withLock { state in
      state.slots.giveBack(turn.sequence)
      defer { turn.continuation = nil }
      return turn.continuation
    }
    continuation?.resume(with: result)
  }

  /// The context could not be made, or no lane could run the scheduler:
  /// every running and queued turn gets the error, and the running ones give
  /// their sequences back. Called by the scheduler, or in its place when it
  /// never ran (`running` still keeps a second one from starting).
  func failEverything(_ error: any Error) {
    for turn in active { finish(turn, .failure(error)) }
    let queued = state.withLock { state in
      defer {
        state.queue.removeAll()
        state.running = false
      }
      return state.queue
    }
    for turn in queued {
      let continuation = state.withLock { _ in
        defer { turn.continuation = nil }
        return turn.continuation
      }
      continuation?.resume(throwing: error)
    }
  }
}
