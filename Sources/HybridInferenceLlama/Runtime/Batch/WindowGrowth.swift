import CLlama
import HybridInferenceCore

/// How a `BatchedContext`'s KV cache grows with its conversations, up to the
/// window (`contextSize`).
///
/// Why not the whole window at once: without flash attention llama.cpp keeps
/// V transposed, one row per head dimension of as many cells as the context
/// has, and every decode step reads a stretch of each row and writes one
/// element of it. With a 4,096-cell context the rows are 8 KiB apart, and a
/// small model decodes a few percent slower a thousand tokens deep than in a
/// context sized to the conversation, as llama-bench's is (`local-benchmark
/// probe-c`; Benchmarks/RESULTS.md, "Attention at depth"). A small cache also
/// costs less memory for short chats.
///
/// So a context starts with `initialCells` per sequence, and when a turn's
/// prompt and the room reserved for its answer need more, it is made again
/// with the cells needed, rounded up to 256 (llama.cpp pads every context to
/// 256 cells), at most the window: the size llama-bench gives the same turn.
/// The reserved room is the turn's headroom; only an answer running past it
/// (one with no limit) grows with `headroom` more, so that it does not make
/// the context again every few tokens. Why not headroom for every turn: it
/// makes the context a step of 256 cells longer than llama-bench's for the
/// same turn, and the off path reads V's longer rows measurably slower
/// (`local-benchmark probe-c`).
///
/// Every sequence's cells move across: the stream count is the same, so
/// llama.cpp's state of a sequence loads into the new context as it was
/// saved (`llama_state_seq_get_data` / `set_data`). A sequence whose state
/// does not load is decoded again (an active turn) or dropped (an idle
/// one), as `ContextGrowth` does.
///
/// When a new, shorter conversation starts on a context no other turn is
/// using, the context is made smaller again the same way (`shrinkWindow`);
/// a starting turn asks for either (`fitWindow`). A turn that starts past
/// the decision's crossing (`AttentionChoice.Decision.offFromDepth`) makes
/// it again without flash attention (`switchAttention`): the states' V is
/// rewritten for the other layout first (`SequenceStateLayout.withValues`),
/// since llama.cpp refuses a state saved with the other setting.
///
/// The swap holds `creation` from the old context's free to the new one's
/// store, as `ContextGrowth` does, and for the same reason.
extension BatchedContext {
  /// Cells each sequence starts with: 512 (a prompt of a few hundred tokens
  /// and its answer).
  static var initialCells: Int { 512 }
  /// Cells added beyond what an answer past its reserved room needs, so
  /// that it does not make the context again every few tokens.
  static var headroom: Int { 128 }

  /// The cells per sequence that hold `tokens`: rounded up to 256, at most
  /// `window`.
  static func cells(toHold tokens: Int, window: Int) -> Int {
    let (padded, overflow) = tokens.addingReportingOverflow(255)
    return overflow ? window : min(window, padded / 256 * 256)
  }

  /// Makes the context again for a starting turn that needs `tokens` tokens
  /// of its sequence and answers from `depth` tokens: larger when it has
  /// fewer cells (`growWindow`), smaller when it holds far more than
  /// anything needs (`shrinkWindow`), and with the attention setting the
  /// decision gives that depth (`AttentionChoice.Decision.type(atDepth:)`)
  /// when it has the other. Returns true when it made it again (the caller
  /// reads the new context).
  ///
  /// The setting follows the deepest conversation the context holds (one
  /// context, one setting), idle ones included, since they may go on: it
  /// turns off when a turn starts past the switch depth, and on again when
  /// every conversation held is short again (a new one replaced the long
  /// one's cells). A conversation only deepens, so alone it switches once.
  /// Sessions with sequences of their own do not make it switch back and
  /// forth either (the deep one's cells stay held). Two sessions taking
  /// turns on a context of one sequence do: each turn replaces the other's
  /// cells, so the long one decodes its whole conversation again every
  /// turn; the switch adds a context made again to that prefill (0.16-0.29 s
  /// for SmolLM2 on 2 cores, most of it llama.cpp making the context).
  func fitWindow(toHold tokens: Int, depth: Int) -> Bool {
    let deepest = caches.map(\.tokens.count).reduce(depth, max)
    let wanted = settings.flashAttention.type(atDepth: deepest)
    return growWindow(toHold: tokens, attention: wanted) || shrinkWindow(toHold: tokens, attention: wanted)
      || switchAttention(to: wanted)
  }

  /// Makes the context again with room for `tokens` tokens per sequence when
  /// it has fewer cells, with `attention` (the setting it has when nil).
  /// Returns true when it made it again (the caller reads the new context);
  /// false when it had room, or cannot grow (no memory).
  func growWindow(toHold tokens: Int, attention wanted: llama_flash_attn_type? = nil) -> Bool {
    let window = Self.window(of: settings)
    return creation.withLock { () -> Bool in
      let target = Self.cells(toHold: tokens, window: window)
      guard target > cells, !windowGrowthFailed else { return false }
      return remake(cells: target, attention: wanted ?? attention)
    }
  }

  /// Makes the context again with fewer cells when a turn starts on an
  /// otherwise idle context and everything it holds, with `tokens` for the
  /// turn, fits in half of them or less. Returns true when it made it again.
  ///
  /// Why: a context grown by one long conversation would otherwise decode
  /// every later, shorter one in the long one's cells, and without flash
  /// attention every V row is as long as the context (`local-benchmark
  /// probe-c`: 2,048 cells decode 1,196 tokens at 0.976 of a context sized
  /// to them). Half, so that a conversation growing again by a turn does not
  /// make the context again at once; at least `initialCells`, where every
  /// context starts.
  private func shrinkWindow(toHold tokens: Int, attention wanted: llama_flash_attn_type) -> Bool {
    guard active.count == 1 else { return false }
    let held = caches.map(\.tokens.count).max() ?? 0
    let window = Self.window(of: settings)
    return creation.withLock { () -> Bool in
      let target = max(min(window, Self.initialCells), Self.cells(toHold: max(tokens, held), window: window))
      guard target <= cells / 2, !windowGrowthFailed else { return false }
      return remake(cells: target, attention: wanted)
    }
  }

  /// Makes the context again at its size with `wanted` when it has the
  /// other setting. Returns true when it made it again.
  private func switchAttention(to wanted: llama_flash_attn_type) -> Bool {
    creation.withLock { () -> Bool in
      guard attention != wanted, !windowGrowthFailed else { return false }
      return remake(cells: cells, attention: wanted)
    }
  }

  /// Makes the context again with `target` cells per sequence and
  /// `wanted`, every sequence's cells moved across; called under
  /// `creation`. Returns false when there was no context to remake.
  ///
  /// A state is rewritten for the setting the new context really has (when
  /// it could not be made as wanted, the old one's, and nothing is
  /// rewritten), one at a time as it loads, so peak memory is one state
  /// more. A state that does not load is decoded again (an active turn) or
  /// dropped (an idle one), and the log says so.
  private func remake(cells target: Int, attention wanted: llama_flash_attn_type) -> Bool {
    guard let old = pointer else { return false }
    // Copied out first; the old context goes before the new one is made,
    // so peak memory is the new one and the states' used cells.
    let states = caches.map { cache -> [UInt8]? in
      guard !cache.tokens.isEmpty else { return nil }
      let size = llama_state_seq_get_size(old, cache.id)
      var bytes = [UInt8](repeating: 0, count: size)
      guard size > 0, llama_state_seq_get_data(old, &bytes, size, cache.id) == size else { return nil }
      return bytes
    }
    llama_free(old)
    pointer = nil
    let previous = (cells, attention)
    (cells, attention) = (target, wanted)
    do {
      pointer = try makeContext(sequences: caches.count)
    } catch {
      windowGrowthFailed = true
      (cells, attention) = previous
      pointer = try? makeContext(sequences: caches.count)  // nil: the scheduler fails its turns
    }
    let transposed = attention == previous.1 ? nil : attention == LLAMA_FLASH_ATTN_TYPE_DISABLED
    var dropped = 0
    for (index, state) in states.enumerated() {
      guard let state else { continue }
      if let pointer, let bytes = transposed.map({ rewritten(state, sequence: index, transposed: $0) }) ?? state,
        llama_state_seq_set_data(pointer, bytes, bytes.count, caches[index].id) == bytes.count
      {
        continue
      }
      for turn in active where turn.sequence == index {
        turn.unDecoded = ArraySlice(caches[index].tokens) + turn.unDecoded
      }
      caches[index] = SequenceCache(id: caches[index].id)
      dropped += 1
    }
    if dropped > 0 {
      LlamaBackend.logSink.current.log(
        LogRecord(
          level: .warning, category: .local,
          message:
            "a remade context refused \(dropped) of \(states.count) sequence states; their turns decode them again"))
    }
    return true
  }

  /// `state`, llama.cpp's state of sequence `index`, with V laid out for the
  /// other flash-attention setting (`SequenceStateLayout.withValues`); nil
  /// when it is not laid out as the cache knows.
  private func rewritten(_ state: [UInt8], sequence index: Int, transposed: Bool) -> [UInt8]? {
    let (streams, tokens) = (caches.count, caches[index].tokens.count)
    return SequenceStateLayout.canonical(state, sequence: index, streams: streams, tokens: tokens)
      .flatMap { SequenceStateLayout.withValues(transposed: transposed, $0, tokens: tokens) }
      .map { SequenceStateLayout.expanded($0, sequence: index, streams: streams) }
  }

  /// Grows when the next step would put a sequence past its cells: a prompt
  /// still to decode, or an answer past the room it was given, with
  /// `headroom` more. Returns true when the context was made again.
  func growForNextStep() -> Bool {
    guard let needed = active.map({ caches[$0.sequence].tokens.count + $0.unDecoded.count }).max(),
      needed > creation.withLock({ cells })
    else { return false }
    let (withHeadroom, overflow) = needed.addingReportingOverflow(Self.headroom)
    return growWindow(toHold: overflow ? .max : withHeadroom)
  }
}
