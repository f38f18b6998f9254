import CLlama
import HybridInferenceCore

/// The scheduler's side of a `PromptCache`: at a turn's admission, the
/// longest saved prefix of its prompt that is longer than what its sequence
/// keeps in memory is loaded into the sequence instead of decoded; when the
/// turn has decoded its shareable opening, and its whole prompt, the
/// sequence's state is copied out and handed to the cache's write queue.
///
/// Both run on the scheduler's lane between two steps, the only time the
/// context is used safely. The copy (`llama_state_seq_get_data`) is the
/// llama thread's share of a save; the checksum and the file go to the write
/// queue while the turn answers, and `respond` waits for them at its end.
/// The whole-prompt copy is taken after the first token was handed to the
/// caller, so it does not delay it.
extension BatchedContext {
  /// Prefixes shorter than this are not saved: decoding them costs less than a file.
  static var minimumCachedTokens: Int { 16 }

  /// Loads the longest saved prefix of `turn`'s prompt when it is longer than
  /// what the sequence reuses, then plans the turn's saves.
  func loadSavedPrefix(_ turn: SequenceTurn, context: OpaquePointer, memory: llama_memory_t) {
    guard promptCache != nil, !cacheKeys.isEmpty, let tag = stateTag.withLock({ $0 }) else { return }
    let prompt = turn.prompt
    let log = turn.request.log
    let sequence = turn.sequence
    let clock = ContinuousClock.now
    if let (count, kept) = savedPrefix(of: prompt, longerThan: turn.reusedTokens, tag: tag, log: log) {
      let bytes = SequenceStateLayout.expanded(kept, sequence: sequence, streams: caches.count)
      // llama.cpp empties the sequence first, whatever it then reads.
      if llama_state_seq_set_data(context, bytes, bytes.count, llama_seq_id(sequence)) == bytes.count {
        caches[sequence].loaded(prompt.prefix(count), shareable: turn.request.shareableTokens)
        // The whole prompt saved: its last token is decoded again, for fresh logits.
        caches[sequence].keep(prefix: min(count, prompt.count - 1), in: memory)
        turn.reusedTokens = caches[sequence].tokens.count
        log.log(
          LogRecord(
            level: .debug, category: .local,
            message:
              "prompt cache: loaded \(count) tokens of \(prompt.count) in \(PromptCacheWrites.milliseconds([clock.duration(to: .now)])) ms"
          ))
      } else {
        caches[sequence].clear(memory)
        turn.reusedTokens = 0
        log.log(
          LogRecord(
            level: .warning, category: .local,
            message: "prompt cache: llama.cpp refused a saved state of \(count) tokens; decoding the prompt"))
      }
      turn.unDecoded = prompt[turn.reusedTokens...]
    }
    var points: [Int] = []
    let shareable = turn.request.shareableTokens
    if shareable >= Self.minimumCachedTokens, shareable > turn.reusedTokens, shareable < prompt.count {
      points.append(shareable)
      turn.shareablePoint = shareable
    }
    if prompt.count >= Self.minimumCachedTokens { points.append(prompt.count) }
    turn.savePoints = points
  }

  /// The longest saved prefix of `prompt` past `atLeast` tokens, laid out
  /// for the context's setting now: of its own states, or of those saved
  /// with the decision's other setting (before the context switched at the
  /// crossing, `WindowGrowth`), their V rewritten (`SequenceStateLayout.withValues`),
  /// when one of those is longer. One listing of the directory for both.
  private func savedPrefix(of prompt: [llama_token], longerThan atLeast: Int, tag: [UInt8], log: LogHandler) -> (
    tokens: Int, state: [UInt8]
  )? {
    let now = attentionNow
    guard let promptCache, let own = cacheKeys.first(where: { $0.type == now })?.key.hash else { return nil }
    let keys = [own] + cacheKeys.map(\.key.hash).filter { $0 != own }
    guard let found = promptCache.store.load(prompt: prompt, keys: keys, longerThan: atLeast, tag: tag, log: log)
    else { return nil }
    if found.key == own { return (found.tokens, found.state) }
    let transposed = now == LLAMA_FLASH_ATTN_TYPE_DISABLED
    if let state = SequenceStateLayout.withValues(transposed: transposed, found.state, tokens: found.tokens) {
      return (found.tokens, state)
    }
    // The other setting's state did not rewrite: this setting's own, if any.
    return promptCache.store.load(prompt: prompt, keys: [own], longerThan: atLeast, tag: tag, log: log).map {
      ($0.tokens, $0.state)
    }
  }

  /// Saves the sequence's state when it holds exactly the tokens of the
  /// turn's next save point.
  func saveIfDue(_ turn: SequenceTurn, context: OpaquePointer) {
    let sequence = turn.sequence
    let count = caches[sequence].tokens.count
    // A media prompt plans no save points (`prefillMedia`); its key would
    // name its images all the same.
    guard let promptCache, let key = cacheKey, let writes = turn.request.cacheWrites,
      let point = turn.savePoints.first, point == count,
      let stateKey = PromptCacheKey.hash(key.hash, images: turn.request.media?.layout.images ?? [])
    else { return }
    turn.savePoints.removeFirst()
    let clock = ContinuousClock.now
    let log = turn.request.log
    let size = llama_state_seq_get_size(context, llama_seq_id(sequence))
    guard size <= promptCache.maximumBytes else {
      log.log(
        LogRecord(
          level: .warning, category: .local,
          message: "prompt cache: a state of \(count) tokens (\(size) bytes) exceeds maximumBytes; not saved"))
      return
    }
    var raw = [UInt8](repeating: 0, count: size)
    guard llama_state_seq_get_data(context, &raw, size, llama_seq_id(sequence)) == size,
      let kept = SequenceStateLayout.canonical(raw, sequence: sequence, streams: caches.count, tokens: count)
    else {
      log.log(
        LogRecord(
          level: .warning, category: .local,
          message: "prompt cache: this llama.cpp wrote a sequence state of a layout the cache does not know; not saved"
        ))
      return
    }
    writes.recordCopy(clock.duration(to: .now))
    promptCache.store.save(
      tokens: Array(caches[sequence].tokens), state: kept, key: stateKey, replacing: cacheKeys.map(\.key.hash),
      isShareable: point == turn.shareablePoint, writes: writes, log: log)
  }

  /// The tokens the next chunk of `turn` may decode before its next save point.
  func tokensBeforeSavePoint(_ turn: SequenceTurn) -> Int? {
    guard let point = turn.savePoints.first else { return nil }
    let room = point - caches[turn.sequence].tokens.count
    return room > 0 ? room : nil
  }

  /// The tag llama.cpp writes at the start of this context's sequence
  /// states, read from an empty sequence of a new context.
  static func stateTag(of context: OpaquePointer) -> [UInt8]? {
    let size = llama_state_seq_get_size(context, 0)
    guard size >= SequenceStateLayout.tagSize, size <= 4096 else { return nil }
    var bytes = [UInt8](repeating: 0, count: size)
    guard llama_state_seq_get_data(context, &bytes, size, 0) == size else { return nil }
    return Array(bytes.prefix(SequenceStateLayout.tagSize))
  }
}
