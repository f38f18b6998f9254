import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// The settings of a `LocalSystemModel` as they reach llama.cpp: refused when
/// they make no sense, clamped to what llama.cpp's C types and limits hold.
///
/// - A `contextSize`, `batchSize`, `threads` or `parallelRequests` of zero or
///   less makes every request (and `prepare()`) throw `invalidOptions`, before
///   the model is loaded; `availability` does not look at them.
/// - `contextSize` above `maximumContextSize` (2^24 tokens, more than any
///   model is trained on, and small enough that 64 sequences of it fit
///   llama.cpp's `uint32` context and `int32` positions) is clamped to it;
///   below that, the memory check decides (`.deviceNotEligible` for a window
///   this machine cannot hold).
/// - `batchSize` is clamped to the context size (llama.cpp does the same, and
///   a batch is allocated up front, so a larger one would only cost memory).
/// - `threads` is clamped to 512, ggml's `GGML_MAX_N_THREADS`;
///   `parallelRequests` to 64.
/// - `gpu: .layers(n)` with `n` below zero makes every request (and
///   `prepare()`) throw `invalidOptions`; above the model's layer count, it
///   is clamped to it.
extension LocalSystemModel {
  /// The most tokens of context one sequence gets: 2^24.
  public static let maximumContextSize = 1 << 24
  /// The most threads llama.cpp runs (`GGML_MAX_N_THREADS`).
  public static let maximumThreads = 512
  /// The most sequences one context decodes together.
  public static let maximumParallelRequests = 64

  /// Throws `invalidOptions` for a size or count of zero or less.
  func validateSettings() throws(HybridInferenceError) {
    let counts: [(String, Int?)] = [
      ("contextSize", contextSize), ("batchSize", batchSize), ("threads", threads),
      ("parallelRequests", parallelRequests),
    ]
    for case (let name, let value?) in counts where value <= 0 {
      throw .invalidOptions("LocalSystemModel.\(name) must be > 0, got \(value)")
    }
    if case .layers(let layers) = gpu.request, layers < 0 {
      throw .invalidOptions("LocalSystemModel.gpu layers must be >= 0, got \(layers)")
    }
  }

  /// The tokens of context each sequence gets: `contextSize`, else 4,096 or
  /// the trained length if shorter; at most `maximumContextSize`.
  func effectiveContextSize(trainedContextLength: Int?) -> Int {
    let asked = contextSize ?? min(4096, max(1, trainedContextLength ?? 4096))
    return min(max(1, asked), Self.maximumContextSize)
  }

  /// How this model value's context is made (after `validateSettings()`).
  /// With `.automatic` flash attention on the CPU backend, the first call for
  /// a model file calibrates it (`AttentionChoice.calibrated`); later ones
  /// find the decision remembered.
  func settings(for model: LlamaModel) async -> BatchedContext.Settings {
    let contextSize = effectiveContextSize(trainedContextLength: model.trainedContextLength)
    let threads = min(max(1, self.threads), Self.maximumThreads)
    let directory = promptCache?.directoryURL
    let batch = min(max(1, batchSize), contextSize)
    let memory = MemoryPlan.loaded(model)
    let decision = await AttentionChoice.decide(
      flashAttention,
      facts: AttentionChoice.Facts(
        headSize: model.attentionHeadSize, offloadsToGPU: model.offload.isOffloaded)
    ) {
      await AttentionChoice.calibrated(
        model: model, threads: threads, contextSize: contextSize, batchSize: batch, directory: directory,
        pages: memory.weightsInMemory)
    }
    return BatchedContext.Settings(
      contextSize: contextSize, batchSize: batch, threads: threads, sequences: sequenceCount,
      flashAttention: decision, memory: memory)
  }

  /// Memory of this process the model needs: the weights unless already
  /// loaded, plus the KV cache of every sequence the context may grow to,
  /// less what goes to a GPU (the offloaded layers' weights and cache, as
  /// the loaded model placed them, else as `offloadPlan` would now, if it
  /// fits the GPU: layers that do not load on the CPU instead);
  /// `Int.max` when that does not fit an `Int`.
  /// `devices` are the registry's unless a test describes others.
  func requiredMemory(
    for file: GGUFFile, loaded: LlamaModel?, devices: @autoclosure () -> [ComputeDevice] = DeviceRegistry.devices()
  ) -> Int {
    let weights = loaded == nil ? file.fileSize : 0
    let total = OffloadPlan.sum([weights, kvCacheBytes(for: file)])
    guard total < Int.max else { return Int.max }
    let onGPU: Int
    if let loaded {
      onGPU = offloadFacts(for: file, devices: []).lastLayers(loaded.offload.layers).context
    } else {
      let plan = OffloadPlan.decide(gpu, facts: offloadFacts(for: file, devices: devices()))
      // A tied output layer's copy of the token embeddings is on the GPU
      // beside the ones the CPU keeps: it saves nothing here.
      let copy = plan.layers > 0 && !file.tensorBytes.hasOutputWeight ? file.tensorBytes.tokenEmbedding : 0
      let moved = plan.deviceWeightBytes - min(copy, plan.deviceWeightBytes)
      onGPU = plan.fitsDevice ? OffloadPlan.sum([moved, plan.deviceContextBytes]) : 0
    }
    return total - min(total, onGPU)
  }

  /// The KV cache of every sequence the context may grow to, from the
  /// file's header; `Int.max` when that does not fit an `Int`.
  func kvCacheBytes(for file: GGUFFile) -> Int {
    let window = effectiveContextSize(trainedContextLength: file.architectureInteger("context_length"))
    return OffloadPlan.product([file.kvBytesPerToken ?? 0, window, sequenceCount])
  }

  /// The sequences the context may grow to (the initializer has already
  /// clamped `parallelRequests` to `maximumParallelRequests`).
  private var sequenceCount: Int { min(max(1, parallelRequests), Self.maximumParallelRequests) }
}
