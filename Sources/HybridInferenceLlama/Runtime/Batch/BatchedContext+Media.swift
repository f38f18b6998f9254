import CLlama
import HybridInferenceCore

/// The scheduler's side of a prompt with images (`GenerationRequest.media`).
///
/// Such a prompt is prefilled alone, between two steps, on the scheduler's
/// lane: libmtmd encodes each image and decodes the chunks, text and image
/// embeddings, into the turn's sequence (`mtmd_helper_eval_chunks`), in
/// batches of the context's batch size; the other turns wait for that one
/// prefill. Then the turn samples its first token from the last logits and
/// answers in the shared steps like any other.
///
/// Its cells are never reused by another prompt: the sequence is emptied
/// first (nothing of an earlier turn is kept), no saved prompt state is
/// loaded or saved, and the cache records each position as `mediaToken`,
/// which no tokenized prompt holds, so no later turn (of this session or
/// another) finds a shared prefix there, and two prompts that differ only
/// in their images can never share a state.
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

  /// Prefills `turn`'s prompt from `chunks` into its emptied sequence, with
  /// room for `reserve` answer tokens, and samples its first token.
  ///
  /// - Throws: `CancellationError` when the turn was cancelled during it;
  ///   libmtmd's failure, typed; the sequence is empty again after either.
  func prefillMedia(_ turn: SequenceTurn, chunks: MediaChunks, reserve: Int, window: Int) throws {
    var (context, memory) = try current()
    caches[turn.sequence].clear(memory)
    turn.reusedTokens = 0
    let count = turn.prompt.count
    if fitWindow(toHold: count + reserve, depth: count) { (context, memory) = try current() }
    turn.sampler = try turn.request.sampler()
    stepFlags = [turn.flag]
    setAbortCallback(context, enabled: true)
    let evaluated = Result { () throws(HybridInferenceError) -> Int32 in
      try chunks.projector.evaluate(
        chunks, into: context, sequence: llama_seq_id(turn.sequence), from: 0,
        batchSize: Int32(clamping: settings.batchSize))
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
    caches[turn.sequence].append(repeatElement(Self.mediaToken, count: count))
    turn.unDecoded = []
    turn.answering = true
    // The logits of the chunks' last token: the last output of the last decode.
    sample(turn, at: -1, context: context, window: window)
  }
}
