import CLlama
import HybridInferenceCore

/// The scheduler's side of a prompt with images (`GenerationRequest.media`).
///
/// Such a prompt is prefilled alone, between two steps, on the scheduler's
/// lane: libmtmd encodes each image and decodes the chunks, text and image
/// embeddings, into the turn's sequence (`mtmd_helper_eval_chunk_single`),
/// in batches of the context's batch size; the other turns wait for that
/// one prefill. Then the turn samples its first token from the last logits
/// and answers in the shared steps like any other.
///
/// A session's next turn keeps what its sequence holds of the same
/// conversation, as a text turn does: the text token by token, an image
/// whole when the new prompt has the same image (by the SHA-256 of its
/// bytes) in the same positions (`SequenceCache.keepCachedPrefix`). It
/// then encodes only the images after what it kept; with none after, the
/// rest is text, decoded in the shared steps. The cache records each image
/// position as `mediaToken`, which no tokenized prompt holds, so a text
/// prompt never reuses an image's cells, and a sequence that changes hands
/// keeps only a text instruction prefix (a media prompt shares none). No
/// saved prompt state is loaded or saved for a media prompt.
extension BatchedContext {
  /// What a sequence's cache records for each position a media prompt took.
  static var mediaToken: llama_token { LLAMA_TOKEN_NULL }

  /// The error of a turn whose cells were lost while it answered: a context
  /// made again could not take its state, and image embeddings cannot be
  /// decoded again from tokens.
  static var mediaLost: HybridInferenceError {
    .generationFailed("the llama context was made again and could not keep the cells of the prompt's images")
  }

  /// Whether `turn` holds images and must decode its prompt's positions again
  /// (its context was made again without its state): it cannot.
  func lostItsMedia(_ turn: SequenceTurn) -> Bool {
    turn.request.media != nil && turn.unDecoded.contains(Self.mediaToken)
  }

  /// Prefills `turn`'s prompt from `chunks` into its sequence, with room for
  /// `reserve` answer tokens: keeps what the sequence holds of it, decodes
  /// the rest of the text chunk it ends in, evaluates the chunks after that
  /// with libmtmd and samples the first token; or, when only text is left,
  /// leaves that text to the shared steps.
  ///
  /// - Throws: `CancellationError` when the turn was cancelled during it;
  ///   libmtmd's failure, typed; the sequence is empty again after either.
  func prefillMedia(_ turn: SequenceTurn, chunks: MediaChunks, reserve: Int, window: Int) throws {
    var (context, memory) = try current()
    let prompt = turn.prompt
    let layout = chunks.layout
    let count = prompt.count
    var kept = caches[turn.sequence].keepCachedPrefix(of: prompt, images: layout.images, in: memory)
    // Fitted once the prefix is kept, which is kept again after (as `prepare` does).
    if fitWindow(toHold: count + reserve, depth: count) {
      (context, memory) = try current()
      kept = caches[turn.sequence].keepCachedPrefix(of: prompt, images: layout.images, in: memory)
    }
    turn.sampler = try turn.request.sampler()
    var first = layout.chunk(holding: kept)
    guard layout.hasImages(from: first) else {
      turn.reusedTokens = kept
      turn.unDecoded = prompt[kept...]
      return
    }
    var tail: ArraySlice<llama_token> = []
    if layout.images.contains(where: { $0.chunk == first }) || kept == layout.chunkStarts[first] {
      // An image chunk is evaluated whole, from its start.
      caches[turn.sequence].keep(prefix: layout.chunkStarts[first], in: memory)
      if caches[turn.sequence].tokens.count != layout.chunkStarts[first] { first = 0 }
    } else {
      // The rest of a text chunk is decoded here; libmtmd goes on at the next chunk.
      let end = first + 1 < layout.chunkStarts.count ? layout.chunkStarts[first + 1] : count
      tail = prompt[kept..<end]
      first += 1
    }
    let from = caches[turn.sequence].tokens.count
    turn.reusedTokens = from
    stepFlags = [turn.flag]
    setAbortCallback(context, enabled: true)
    let evaluated = Result { () throws(HybridInferenceError) -> Int32 in
      try decodeText(tail, for: turn, context: context)
      return try chunks.projector.evaluate(
        chunks, fromChunk: first, into: context, sequence: llama_seq_id(turn.sequence),
        from: Int32(from + tail.count), batchSize: Int32(clamping: settings.batchSize))
    }
    setAbortCallback(context, enabled: false)
    state.withLock { $0.steps.count += 1 }
    let next: Int32
    switch evaluated {
    case .success(let position):
      next = position
    case .failure(let error):
      caches[turn.sequence].clear(memory)
      if isCancelled(turn) { throw CancellationError() }
      throw error
    }
    guard Int(next) == count else {
      caches[turn.sequence].clear(memory)
      throw HybridInferenceError.generationFailed(
        "libmtmd's prompt took \(next) positions, not the \(count) it was counted for")
    }
    caches[turn.sequence].append(prompt[caches[turn.sequence].tokens.count...])
    caches[turn.sequence].holds(layout)
    turn.unDecoded = []
    turn.answering = true
    // The logits of the chunks' last token: the last output of the last decode.
    sample(turn, at: -1, context: context, window: window)
  }

  /// Decodes `tokens`, text that follows what `turn`'s sequence holds, into
  /// it without logits, at most a batch a decode, recording each decode.
  private func decodeText(
    _ tokens: ArraySlice<llama_token>, for turn: SequenceTurn, context: OpaquePointer
  ) throws(HybridInferenceError) {
    var rest = tokens
    while !rest.isEmpty {
      let part = rest.prefix(max(1, settings.batchSize))
      let base = caches[turn.sequence].tokens.count
      for (offset, token) in part.enumerated() {
        batch.token[offset] = token
        batch.pos[offset] = llama_pos(base + offset)
        batch.n_seq_id[offset] = 1
        batch.seq_id[offset]?[0] = llama_seq_id(turn.sequence)
        batch.logits[offset] = 0
      }
      batch.n_tokens = Int32(part.count)
      let status = llama_decode(context, batch)
      guard status == 0 else { throw .generationFailed("llama.cpp could not decode the prompt's text (\(status))") }
      caches[turn.sequence].append(part)
      rest = rest.dropFirst(part.count)
    }
  }
}
