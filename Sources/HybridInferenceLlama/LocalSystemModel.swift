import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceDownload
import HybridInferenceJinja

/// The on-device model: a GGUF file run by llama.cpp.
///
/// One loaded model is shared by every session that uses the same file. The
/// sessions of one model value share one llama context: each request decodes
/// on a sequence of its own, up to `parallelRequests` of them in one batch,
/// and a sequence keeps its session's conversation in the KV cache so that a
/// new turn decodes only its new tokens.
public struct LocalSystemModel: LanguageModel, CustomStringConvertible {
  /// The name every on-device response carries in `modelVersion`. The file's
  /// own name is in `GenerateContentResponse.localModelName`.
  public static let modelVersion = "llama-cpp-system-language-model"

  /// The default model: `HYBRID_LOCAL_MODEL`, else SmolLM2-135M-Instruct in the
  /// cache that `make setup` fills (see the OnDeviceModel article).
  public static let `default` = LocalSystemModel(modelPath: DefaultModelLocation.path())

  /// The GGUF file: the path given, or where the source's download put it
  /// (empty until the source's files, its projector's included, are on
  /// disk: a hub file's path names a commit the hub has not said yet).
  public var modelPath: String { location.path ?? "" }
  /// The multimodal projector's file (an `mmproj` GGUF) that lets the model
  /// read images: the path given, or where the source's download put it;
  /// nil for a model without one, or while its download is not on disk.
  public var projectorPath: String? { location.projectorPath }
  /// Where the file comes from when the library fetches it; nil for a model
  /// given by path.
  public var source: ModelSource? { location.download?.source }
  /// Tokens of context per session; nil means 4096, or less if the model was
  /// trained on less. At most `maximumContextSize`; zero or less makes
  /// requests throw `invalidOptions`.
  public let contextSize: Int?
  /// CPU threads for decoding; defaults to the active processor count. At
  /// most `maximumThreads`; zero or less makes requests throw `invalidOptions`.
  public let threads: Int
  /// Tokens decoded per llama.cpp batch during prefill; at most the context
  /// size; zero or less makes requests throw `invalidOptions`.
  public let batchSize: Int
  /// The most requests decoded together, each on a sequence of this model
  /// value's one llama context; more wait their turn. Each sequence holds up
  /// to `contextSize` tokens of KV cache (512 at first, grown with its
  /// conversation). The context starts with one sequence
  /// and is made again with this many the first time requests overlap, so
  /// memory grows with this number only in apps that answer sessions at once.
  /// More than 64 is clamped to 64; zero or less makes requests throw `invalidOptions`.
  public let parallelRequests: Int
  /// False when the app switched on-device inference off.
  public let isEnabled: Bool
  /// Whether a model whose chat template has no tool format may call tools
  /// in the library's generic format (tools described in the system turn,
  /// the answer a call object or text). When false, a request that offers
  /// tools to such a model is unsupported, and a hybrid sends it to the cloud.
  public let allowsGenericToolFormat: Bool
  /// Where the prompt state of each turn is saved, for sessions of this or
  /// another process whose prompt starts the same; nil keeps it in memory only.
  public let promptCache: PromptCache?
  /// Whether llama.cpp uses its fused flash-attention kernel; `.automatic`
  /// decides from the model's attention head size and the backend when the
  /// context is made (`FlashAttention`).
  public let flashAttention: FlashAttention
  /// How the weights are held in memory: `.automatic` reads them in and
  /// moves them onto 2 MiB pages where the kernel allows and the model takes
  /// at most a quarter of memory (`ModelMemory`).
  public let memory: ModelMemory
  /// How many layers go to a GPU: `.automatic` puts there every layer that
  /// fits its free memory, else as many as fit (`GPUOffload`). What it came
  /// to is `offload`, once the model is loaded.
  public let gpu: GPUOffload

  /// Where the file is, and the verdict on it.
  let location: ModelFileLocation
  let handle: LoadedModelHandle

  /// A model backed by the GGUF file at `modelPath`. Nothing is read until the
  /// first `availability`, `prepare()` or request. With a `promptCache`, each
  /// turn's prompt state is saved there and loaded by any context whose
  /// prompt starts with it (`PromptCache`). `flashAttention` forces llama.cpp's
  /// fused attention kernel on or off; `.automatic` picks the faster one for
  /// the model on this backend. `memory` chooses between the weights mapped
  /// from the file and read in on 2 MiB pages (`ModelMemory`). `gpu` says
  /// how many layers go to a GPU, where the linked llama.cpp has one
  /// (`GPUOffload`, `computeDevices`). `projectorPath` is the model's
  /// multimodal projector (an `mmproj` GGUF made for these weights): with
  /// one that reads images, the model answers prompts with JPEG, PNG, GIF
  /// and BMP images itself (see the OnDeviceModel article); without, such a
  /// prompt is `unsupportedRequest`, which a hybrid answers in the cloud.
  public init(
    modelPath: String, projectorPath: String? = nil, contextSize: Int? = nil, threads: Int? = nil, batchSize: Int = 512,
    parallelRequests: Int = 4, isEnabled: Bool = true, allowsGenericToolFormat: Bool = true,
    promptCache: PromptCache? = nil, flashAttention: FlashAttention = .automatic, memory: ModelMemory = .automatic,
    gpu: GPUOffload = .automatic
  ) {
    self.init(
      location: ModelFileLocation(path: modelPath, projectorPath: projectorPath), contextSize: contextSize,
      threads: threads, batchSize: batchSize,
      parallelRequests: parallelRequests, isEnabled: isEnabled, allowsGenericToolFormat: allowsGenericToolFormat,
      promptCache: promptCache, flashAttention: flashAttention, memory: memory, gpu: gpu)
  }

  /// The one initializer the public ones share.
  init(
    location: ModelFileLocation, contextSize: Int?, threads: Int?, batchSize: Int, parallelRequests: Int,
    isEnabled: Bool, allowsGenericToolFormat: Bool, promptCache: PromptCache?, flashAttention: FlashAttention,
    memory: ModelMemory, gpu: GPUOffload
  ) {
    self.location = location
    self.memory = memory
    self.gpu = gpu
    self.allowsGenericToolFormat = allowsGenericToolFormat
    self.promptCache = promptCache
    self.flashAttention = flashAttention
    self.contextSize = contextSize
    self.threads = threads ?? ProcessInfo.processInfo.activeProcessorCount
    self.batchSize = batchSize
    self.parallelRequests = min(parallelRequests, Self.maximumParallelRequests)
    self.isEnabled = isEnabled
    self.handle = LoadedModelHandle()
  }

  /// Always `LocalSystemModel.modelVersion`, whichever file is loaded.
  public var modelVersion: String { Self.modelVersion }
  /// On device: any failure of its own lets a hybrid fall back to the cloud.
  public var placement: ModelPlacement { .onDevice }
  /// Names the model file.
  public var description: String { "LocalSystemModel(\(source.map(String.init(describing:)) ?? modelPath))" }

  /// Whether the model can run here: `.deviceNotEligible` when the CPU
  /// lacks what the build needs, or the model needs more memory than the
  /// process can get, less what goes to a GPU (`gpu`). Costs a `stat` of
  /// the file once the file has been checked, and a read of the devices'
  /// free memory; never loads the model.
  public var availability: Availability {
    if isSwitchedOff { return .unavailable(.localInferenceNotEnabled) }
    guard case .success(let file) = location.check() else { return .unavailable(.modelNotReady) }
    if !DeviceEligibility.missingCPUFeatures.isEmpty { return .unavailable(.deviceNotEligible) }
    if let available = DeviceEligibility.availableMemory(),
      requiredMemory(for: file, loaded: handle.model) > available
    {
      return .unavailable(.deviceNotEligible)
    }
    return .available
  }

  /// Whether the app or the user (`HYBRID_INFERENCE_DISABLE_LOCAL=1`) switched
  /// on-device inference off.
  private var isSwitchedOff: Bool {
    !isEnabled || getenv("HYBRID_INFERENCE_DISABLE_LOCAL").map { String(cString: $0) } == "1"
  }

  /// Loads the model (and its projector) and makes its context now, so that
  /// the first request does not wait for them.
  /// - Parameter progress: Called with 0...1 as the file loads.
  public func prepare(progress: (@Sendable (Double) -> Void)? = nil) async throws {
    try validateSettings()
    let model = try await loadedModel(progress: progress)
    // The projector beside the weights; one that does not load leaves the
    // model answering text, and each image request then says why.
    if location.hasProjector { _ = try? await loadedProjector(for: model) }
    let settings = await settings(for: model)
    try await handle.context(for: model, settings: settings, promptCache: promptCache).prepare()
  }

  /// llama.cpp's own log is process-wide: this routes it (quiet by default).
  public static func setLlamaLogHandler(_ handler: LogHandler) {
    LlamaBackend.logSink.current = handler
  }

  /// Generates on device and answers in one piece.
  ///
  /// The deltas are gathered on the compute lane as the scheduler hands them
  /// over, not streamed to this task: collecting a stream woke its consumer
  /// at every delivery, a context switch on the cores the decode runs on.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    let gathered = Locked(ResponseAccumulator())
    try await generate(request) { delta in gathered.withLock { _ = $0.add(delta) } }
    return try gathered.withLock { accumulator throws in try accumulator.finished(by: Self.modelVersion) }
  }

  /// Generates on device, token by token, as deltas; the last delta carries the finish reason and usage.
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    .producing { continuation in try await generate(request) { continuation.yield($0) } }
  }

  private func generate(
    _ request: ModelRequest, yield: @escaping @Sendable (GenerateContentResponse) -> Void
  ) async throws {
    if case .unavailable(let reason) = availability {
      throw HybridInferenceError.unavailable(model: Self.modelVersion, reason: reason)
    }
    try validateSettings()
    // Media the device does not read fail before the model loads, so a hybrid falls back at once.
    try DeviceMedia.checkNewPrompt(of: request.transcript, reading: mediaBeforeLoad)
    let options = request.options.foundationModels
    try options?.validate()
    // The schema becomes a grammar before any work, so one the device cannot
    // serve (a pattern) fails at once and a hybrid falls back.
    let grammar = try request.responseSchema.map { schema throws(HybridInferenceError) in
      try SchemaGrammar.gbnf(for: schema)
    }
    let model = try await loadedModel(progress: nil)
    let (projector, images) = try await projector(reading: request.transcript, model: model)
    let reading = projector.map { DeviceMedia.Reading.images(marker: $0.marker) } ?? .textOnly
    let allowsGenericToolFormat = allowsGenericToolFormat
    let context = handle.context(for: model, settings: await settings(for: model), promptCache: promptCache)
    // Announced before the render, so that a burst of sessions starts in one step.
    let announcement = context.announce()
    defer { announcement.withdraw() }
    // The template's renders run off the cooperative pool, and stop when the request is cancelled.
    // With images, they are checked and decoded there too, and the prompt is
    // libmtmd's chunks: their text tokens and a placeholder for each image
    // position (`MediaLayout`), nothing shareable.
    let (tools, prompt, shareable, thoughts, media) = try await TemplateThread.run { cancellation in
      let rendered = try Self.prompt(
        of: request, model: model, allowsGenericToolFormat: allowsGenericToolFormat, reading: reading,
        cancellation: cancellation)
      if let projector {
        let chunks = try Self.mediaChunks(of: rendered.rendered, images: images, model: model, projector: projector)
        return (rendered.tools, chunks.layout.tokens, 0, rendered.thoughts, Optional(chunks))
      }
      let shareable = try model.shareablePrefix(
        of: rendered.tokens, messages: rendered.messages, tools: rendered.templateTools, cancellation: cancellation)
      return (rendered.tools, rendered.tokens, shareable, rendered.thoughts, nil)
    }
    let claim = request.sessionStorage.value(forKey: "llama") { LocalSessionClaim() }
    claim.uses(context)
    guard !prompt.isEmpty else { throw HybridInferenceError.generationFailed("the prompt has no tokens") }
    let name = model.name
    // Locked: `onText` runs on the scheduler's thread while this task waits
    // in `submit`, and this task reads both once `submit` has returned.
    let answer = Locked("")
    // Splits off the thoughts and holds back a tool call's text (the
    // scheduler feeds it, this task finishes it). A grammar that holds from
    // the first token has no splitter (`prompt` closed the block).
    let shown = Locked(
      AnswerParts(
        thoughts: thoughts, calls: tools.map { ToolCallStreamFilter(syntax: $0.syntax, tools: $0.offered) }))
    let callGrammar = tools?.grammar.map { (text: $0, lazy: tools?.isLazy == true ? tools?.syntax : nil) }
    var generation = GenerationRequest(
      prompt: prompt,
      shareableTokens: shareable,
      owner: claim.owner, maximumResponseTokens: options?.maximumResponseTokens,
      sampler: {
        if let callGrammar {
          return try SamplerChain(options: options, grammar: (callGrammar.text, model), lazy: callGrammar.lazy)
        }
        return try SamplerChain(options: options, grammar: grammar.map { ($0, model) })
      },
      onText: { text in
        if grammar != nil { answer.withLock { $0 += text } }
        let parts = shown.withLock { $0.feed(text) }
        if parts.isEmpty { return }
        yield(
          GenerateContentResponse(
            candidates: [Candidate(content: Content(role: "model", parts: parts))],
            modelVersion: Self.modelVersion, localModelName: name))
      })
    generation.thoughts = thoughts
    generation.media = media
    if generation.thoughts != nil {
      generation.thoughtBudget = try ThoughtBudget(options?.reasoning, syntax: thoughts?.syntax, model: model)
    }
    if let pattern = tools?.syntax.pattern {
      generation.shownControlTokens = try model.controlTokens(in: pattern.literals)
    }
    generation.stopsAtCompleteJSON = grammar != nil
    generation.log = request.logHandler
    let cacheWrites = promptCache.map { _ in PromptCacheWrites() }
    generation.cacheWrites = cacheWrites
    let outcome = try await context.submit(generation, announcement: announcement)
    // Checked here, not in the session, so that a hybrid falls back on an
    // answer the grammar allowed but the schema or the type refuses.
    if let schema = request.responseSchema { _ = try schema.check(answer.withLock { $0 }) }
    let parts = try shown.withLock { shown throws(HybridInferenceError) in try shown.finish() }
    if !parts.isEmpty {
      yield(
        GenerateContentResponse(
          candidates: [Candidate(content: Content(role: "model", parts: parts))],
          modelVersion: Self.modelVersion, localModelName: name))
    }
    let thoughtTokens = generation.thoughts.map { _ in outcome.thoughtTokens }
    yield(
      GenerateContentResponse(
        candidates: [Candidate(finishReason: outcome.finishReason)],
        usageMetadata: UsageMetadata(
          promptTokenCount: outcome.promptTokens, cachedContentTokenCount: outcome.reusedTokens,
          candidatesTokenCount: outcome.generatedTokens - outcome.thoughtTokens,
          thoughtsTokenCount: thoughtTokens, totalTokenCount: outcome.promptTokens + outcome.generatedTokens),
        modelVersion: Self.modelVersion, localModelName: name))
    // The turn's states are on disk before `respond` returns, or the stream ends.
    if let cacheWrites {
      await cacheWrites.finished()
      cacheWrites.log(to: request.logHandler)
    }
  }

  /// The number of tokens `text` takes, special markers (`<|im_start|>`) included.
  /// Loads the model if needed.
  public func countTokens(_ text: String) async throws -> Int {
    try await loadedModel(progress: nil).tokenize(text, addSpecial: true, parseSpecial: true).count
  }

  /// This model value's context once a request has made it (for tests).
  var batchedContext: BatchedContext? { handle.existingContext }

  /// Where the loaded model's layers are: the GPU, how many of its layers,
  /// and the bytes they take there (`OffloadDecision`); nil until the model
  /// is loaded (`prepare()` or the first request). Never loads the model.
  public var offload: OffloadDecision? { handle.model?.offload }

  /// Whether this model value has loaded its file (for tests).
  var hasLoadedModel: Bool { handle.model != nil }

  /// Whether no request is queued or running on this model value (for tests).
  var isIdle: Bool { handle.existingContext?.isIdle ?? true }

  func loadedModel(progress: (@Sendable (Double) -> Void)?) async throws -> LlamaModel {
    if let model = handle.model { return model }
    if isSwitchedOff {
      throw HybridInferenceError.unavailable(model: Self.modelVersion, reason: .localInferenceNotEnabled)
    }
    let file = try location.check().get()
    let offload = offloadPlan(for: file)
    let plan = MemoryPlan.decide(memory, facts: .current(fileSize: file.fileSize, offloadsToGPU: offload.layers > 0))
    let model = try await LlamaModelStore.shared.model(
      at: location.path ?? "", file: file,
      load: LlamaModel.LoadOptions(weightsInMemory: plan.weightsInMemory, gpu: gpu, offload: offload),
      progress: progress)
    handle.model = model
    progress?(1)
    return model
  }
}

/// Keeps a loaded model alive for as long as any copy of a `LocalSystemModel`
/// value exists (the store itself holds models weakly), with its projector
/// and the one context its sessions share.
final class LoadedModelHandle: Sendable {
  private let loaded = Locked<LlamaModel?>(nil)
  private let loadedProjector = Locked<Projector?>(nil)
  private let context = Locked<BatchedContext?>(nil)

  var model: LlamaModel? {
    get { loaded.withLock { $0 } }
    set { loaded.withLock { $0 = newValue } }
  }

  /// The model's projector once an image asked for it (or `prepare()`
  /// loaded it), held as long as the model value is.
  var projector: Projector? {
    get { loadedProjector.withLock { $0 } }
    set { loadedProjector.withLock { $0 = newValue } }
  }

  /// The shared context, made on first use.
  func context(for model: LlamaModel, settings: BatchedContext.Settings, promptCache: PromptCache?) -> BatchedContext {
    context.withLock { context in
      if let context, context.model === model { return context }
      let made = BatchedContext(model: model, settings: settings, promptCache: promptCache)
      context = made
      return made
    }
  }

  var existingContext: BatchedContext? { context.withLock { $0 } }
}
