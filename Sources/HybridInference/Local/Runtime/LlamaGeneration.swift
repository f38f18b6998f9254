import CLlama

/// One turn to generate: the messages, how to render them, how to sample.
struct GenerationRequest: Sendable {
  var messages: [ChatTemplate.Message]
  /// Tools the template renders itself (`tools`), if any.
  var tools: [ToolDeclaration] = []
  var template: ChatTemplate
  /// The caller's limit on the answer, if any.
  var maximumResponseTokens: Int?
  /// True when the context served another session last: only its shareable
  /// (instruction) prefix may be reused.
  var changedHands: Bool
  var sampler: @Sendable () throws -> SamplerChain
  /// True when a grammar constrains the answer to one JSON value: generation
  /// stops as soon as that value is complete, without waiting for an end token.
  var stopsAtCompleteJSON = false
  /// Where a chat-template fallback is reported: the request's own handler.
  var log: LogHandler = .silent
  var onText: @Sendable (String) -> Void
}

/// What one generation did.
struct GenerationOutcome: Sendable {
  var promptTokens: Int
  /// Prompt tokens already in the KV cache, which were not decoded again.
  var reusedTokens: Int
  var generatedTokens: Int
  var finishReason: FinishReason
}

extension LlamaContext {
  /// Renders and tokenizes the prompt, prefills what the cache lacks, then
  /// samples until an end token, the limit or a full context. Runs on the
  /// context's thread only (`run`).
  func generate(
    _ request: GenerationRequest, context: OpaquePointer, window: Int
  ) throws -> GenerationOutcome {
    let prompt = try model.tokenize(request.template.render(request.messages, tools: request.tools, log: request.log))
    guard !prompt.isEmpty else { throw HybridInferenceError.generationFailed("the prompt has no tokens") }
    // Room for the answer: what the caller asked for, else a quarter of the
    // window up to 256 tokens. A conversation that no longer fits is an error,
    // never silently truncated, so a hybrid can hand it to the cloud.
    let reserve = request.maximumResponseTokens ?? min(256, window / 4)
    guard prompt.count + reserve <= window else {
      throw HybridInferenceError.contextWindowExceeded(contextSize: window, tokenCount: prompt.count + reserve)
    }
    if request.changedHands { keepInstructions(ifSharedWith: prompt) }
    let reused = keepCachedPrefix(of: prompt)
    setAbortCallback(context, enabled: true)
    defer { setAbortCallback(context, enabled: false) }
    try decode(Array(prompt[reused...]), context: context)
    setAbortCallback(context, enabled: false)
    shareablePrefix = try instructionPrefix(of: prompt, request)

    let sampler = try request.sampler()
    let maximumTokens = request.maximumResponseTokens ?? (window - prompt.count)
    var decoder = UTF8StreamDecoder()
    var generated = 0
    var finishReason = FinishReason.stop
    var tracker = JSONCompletionTracker()
    while true {
      if isCancelled { throw CancellationError() }
      if generated >= maximumTokens || cachedTokens.count >= window {
        finishReason = .maxTokens
        break
      }
      let token = try sampler.sample(context)
      if model.isEndOfGeneration(token) { break }
      generated += 1
      let text = decoder.decode(model.piece(of: token))
      if !text.isEmpty { request.onText(text) }
      if request.stopsAtCompleteJSON, tracker.feed(text) { break }
      try decode([token], context: context)
    }
    let rest = decoder.finish()
    if !rest.isEmpty { request.onText(rest) }
    return GenerationOutcome(
      promptTokens: prompt.count, reusedTokens: reused, generatedTokens: generated,
      finishReason: finishReason)
  }

  /// A context from another session keeps its instruction prefix when this
  /// prompt starts with all of it, and nothing otherwise: even a partial
  /// match would tell one session something about another's prompt.
  private func keepInstructions(ifSharedWith prompt: [llama_token]) {
    let instructions = cachedTokens.prefix(shareablePrefix)
    let matches = instructions.count < prompt.count && zip(instructions, prompt).allSatisfy { $0 == $1 }
    keep(prefix: matches ? shareablePrefix : 0)
  }

  /// How many leading tokens of `prompt` are the instructions alone: the part
  /// another session with the same instructions may reuse.
  private func instructionPrefix(of prompt: [llama_token], _ request: GenerationRequest) throws -> Int {
    guard let first = request.messages.first, first.role == "system" else { return 0 }
    let alone = try model.tokenize(request.template.render([first], addGenerationPrompt: false, log: .silent))
    return zip(alone, prompt).prefix { $0 == $1 }.count
  }

  /// Keeps the longest prefix the cache shares with `prompt` and drops the
  /// rest; returns how many tokens are reused. At least one prompt token is
  /// always decoded again, because sampling needs fresh logits.
  private func keepCachedPrefix(of prompt: [llama_token]) -> Int {
    let limit = min(cachedTokens.count, prompt.count - 1)
    let shared = zip(cachedTokens.prefix(limit), prompt).prefix { $0 == $1 }.count
    keep(prefix: shared)
    return cachedTokens.count
  }

  /// Decodes `tokens` after the cached ones, in chunks of the batch size,
  /// asking for logits of the last token only.
  private func decode(_ tokens: [llama_token], context: OpaquePointer) throws {
    let chunkSize = max(1, Int(llama_n_batch(context)))
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
      if start + chunk.count == tokens.count { batch.logits[chunk.count - 1] = 1 }
      let status = llama_decode(context, batch)
      guard status == 0 else { throw failure(status, context: context) }
      cachedTokens.append(contentsOf: chunk)
      start += chunk.count
    }
  }

  /// After a failed decode the cache may hold part of a batch: clear it so the
  /// next request starts from a known state.
  private func failure(_ status: Int32, context: OpaquePointer) -> any Error {
    let heldTokens = cachedTokens.count
    clearCache()
    if status == 2 || isCancelled { return CancellationError() }
    if status == 1 {
      return HybridInferenceError.contextWindowExceeded(contextSize: window(context), tokenCount: heldTokens + 1)
    }
    return HybridInferenceError.generationFailed("llama_decode returned \(status)")
  }

  private func window(_ context: OpaquePointer) -> Int { Int(llama_n_ctx(context)) }
}
