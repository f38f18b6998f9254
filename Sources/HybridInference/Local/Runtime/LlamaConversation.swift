import CLlama
import Synchronization

/// One session's llama context: its KV cache and the tokens it holds.
///
/// `@unchecked Sendable` with a written reason: every llama.cpp pointer and
/// `cachedTokens` are touched only on `worker`, one thread that runs jobs in
/// order and so plays the part of an actor (see `LlamaThread` for why a
/// thread of its own). Each request's cancellation flag is atomic and may be set from any
/// thread.
final class LlamaConversation: @unchecked Sendable {
  let model: LlamaModel
  /// The window llama.cpp made (the requested size rounded up to 256).
  let contextSize: Int
  /// The settings the context was made with, to match it again in the pool.
  let requestedContextSize: Int
  let batchSize: Int
  let threads: Int
  private let worker = LlamaThread(name: "HybridInference.llama")
  private let context: OpaquePointer
  /// Tokens per `llama_decode` call, as llama.cpp settled it.
  private let chunkSize: Int
  /// The tokens whose keys and values the context holds, in order.
  private var cachedTokens: [llama_token] = []
  /// The running request's flag, read by llama.cpp's abort callback.
  private var activeFlag: CancellationFlag?

  init(model: LlamaModel, contextSize: Int, batchSize: Int, threads: Int) throws(HybridInferenceError) {
    var params = llama_context_default_params()
    params.n_ctx = UInt32(contextSize)
    params.n_batch = UInt32(batchSize)
    params.n_ubatch = UInt32(batchSize)
    params.n_seq_max = 1
    params.n_threads = Int32(threads)
    params.n_threads_batch = Int32(threads)
    params.no_perf = true
    guard let context = llama_init_from_model(model.pointer, params) else {
      throw .generationFailed("llama.cpp could not create a context of \(contextSize) tokens")
    }
    self.model = model
    self.context = context
    self.contextSize = Int(llama_n_ctx(context))
    self.requestedContextSize = contextSize
    self.batchSize = batchSize
    self.threads = threads
    self.chunkSize = max(1, Int(llama_n_batch(context)))
  }

  /// Installs (or removes) llama.cpp's abort callback, which lets a long
  /// prefill stop between compute steps when the request is cancelled.
  ///
  /// Only during prefill: llama.cpp calls it once per graph node while the
  /// other threads wait at a barrier, which slowed single-token decoding by
  /// about 10%; there the loop checks for cancellation between tokens instead.
  private func setAbortCallback(enabled: Bool) {
    guard enabled else {
      llama_set_abort_callback(context, nil, nil)
      return
    }
    llama_set_abort_callback(
      context,
      { userData in
        guard let userData else { return false }
        return Unmanaged<LlamaConversation>.fromOpaque(userData).takeUnretainedValue().isCancelled
      }, Unmanaged.passUnretained(self).toOpaque())
  }

  /// Decodes the prompt tokens the cache lacks, abortable between compute steps.
  private func prefillDecode(_ tokens: [llama_token]) throws {
    setAbortCallback(enabled: true)
    defer { setAbortCallback(enabled: false) }
    try decode(tokens)
  }

  deinit {
    llama_free(context)
  }

  private var isCancelled: Bool { (activeFlag?.isSet ?? false) || LlamaBackend.inFlight.isStopping }

  /// What one generation did.
  struct Outcome {
    var promptTokens: Int
    /// Prompt tokens already in the KV cache, which were not decoded again.
    var reusedTokens: Int
    var generatedTokens: Int
    var finishReason: FinishReason
  }

  /// Runs `generate` on the conversation's thread and returns its outcome.
  func run(
    prompt: [llama_token], maximumTokens: Int, sampler: @escaping @Sendable () throws -> SamplerChain,
    onText: @escaping @Sendable (String) -> Void
  ) async throws -> Outcome {
    let flag = CancellationFlag()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        worker.async {
          self.activeFlag = flag
          LlamaBackend.inFlight.enter()
          defer {
            self.activeFlag = nil
            LlamaBackend.inFlight.leave()
          }
          continuation.resume(
            with: Result {
              try self.generate(prompt: prompt, maximumTokens: maximumTokens, sampler: sampler(), onText: onText)
            })
        }
      }
    } onCancel: {
      flag.set()
    }
  }

  /// Prefills what the cache lacks, then samples until an end token, the limit
  /// or a full context. Runs on `worker` only.
  private func generate(
    prompt: [llama_token], maximumTokens: Int, sampler: SamplerChain,
    onText: (String) -> Void
  ) throws -> Outcome {
    guard !prompt.isEmpty else { throw HybridInferenceError.generationFailed("the prompt has no tokens") }
    let reused = keepCachedPrefix(of: prompt)
    try prefillDecode(Array(prompt[reused...]))
    var decoder = UTF8StreamDecoder()
    var generated = 0
    var finishReason = FinishReason.stop
    while true {
      if isCancelled { throw CancellationError() }
      if generated >= maximumTokens || cachedTokens.count >= contextSize {
        finishReason = .maxTokens
        break
      }
      let token = sampler.sample(context)
      if model.isEndOfGeneration(token) { break }
      generated += 1
      let text = decoder.decode(model.piece(of: token))
      if !text.isEmpty { onText(text) }
      try decode([token])
    }
    let rest = decoder.finish()
    if !rest.isEmpty { onText(rest) }
    return Outcome(
      promptTokens: prompt.count, reusedTokens: reused, generatedTokens: generated,
      finishReason: finishReason)
  }

  /// Keeps the longest prefix the cache shares with `prompt` and drops the
  /// rest; returns how many tokens are reused. At least one prompt token is
  /// always decoded again, because sampling needs fresh logits.
  private func keepCachedPrefix(of prompt: [llama_token]) -> Int {
    var shared = 0
    let limit = min(cachedTokens.count, prompt.count - 1)
    while shared < limit, cachedTokens[shared] == prompt[shared] { shared += 1 }
    if shared < cachedTokens.count {
      if !llama_memory_seq_rm(llama_get_memory(context), 0, llama_pos(shared), -1) {
        llama_memory_clear(llama_get_memory(context), true)
        shared = 0
      }
      cachedTokens.removeSubrange(shared...)
    }
    return shared
  }

  /// Decodes `tokens` after the cached ones, in chunks of the batch size,
  /// asking for logits of the last token only.
  private func decode(_ tokens: [llama_token]) throws {
    var start = 0
    while start < tokens.count {
      if isCancelled { throw CancellationError() }
      let chunk = tokens[start..<min(start + chunkSize, tokens.count)]
      var batch = llama_batch_init(Int32(chunk.count), 0, 1)
      defer { llama_batch_free(batch) }
      for (index, token) in chunk.enumerated() {
        batch.token[index] = token
        batch.pos[index] = llama_pos(cachedTokens.count + index)
        batch.n_seq_id[index] = 1
        batch.seq_id[index]?[0] = 0
        batch.logits[index] = 0
      }
      batch.n_tokens = Int32(chunk.count)
      let isLastChunk = start + chunk.count == tokens.count
      if isLastChunk { batch.logits[chunk.count - 1] = 1 }
      let status = llama_decode(context, batch)
      guard status == 0 else { throw failure(status) }
      cachedTokens.append(contentsOf: chunk)
      start += chunk.count
    }
  }

  /// After a failed decode the cache may hold part of a batch: clear it so the
  /// next request starts from a known state.
  private func failure(_ status: Int32) -> any Error {
    let heldTokens = cachedTokens.count
    llama_memory_clear(llama_get_memory(context), true)
    cachedTokens.removeAll()
    if status == 2 || isCancelled { return CancellationError() }
    if status == 1 {
      return HybridInferenceError.contextWindowExceeded(contextSize: contextSize, tokenCount: heldTokens + 1)
    }
    return HybridInferenceError.generationFailed("llama_decode returned \(status)")
  }
}

/// One request's "stop now", set from any thread and read by the decode loop.
final class CancellationFlag: Sendable {
  private let value = Atomic<Bool>(false)

  var isSet: Bool { value.load(ordering: .relaxed) }

  func set() { value.store(true, ordering: .relaxed) }
}
