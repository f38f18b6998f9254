extension LocalSystemModel {
  /// The devices the linked llama.cpp can compute on, as ggml's device
  /// registry lists them: the CPU, and each GPU or accelerator of the
  /// backends it was built with (CUDA, Vulkan, Metal, BLAS, ...). Free
  /// memory is read anew at each call. Starts llama.cpp's backend if it has
  /// not started yet; never loads a model. Empty only if the build
  /// registers no device at all.
  public static var computeDevices: [ComputeDevice] { DeviceRegistry.devices() }

  /// The facts `OffloadPlan` decides from, for `file` on `devices`: the
  /// weights of each layer from the tensor table, the KV cache of the
  /// context this model value makes, and the compute buffer of its batch.
  func offloadFacts(for file: GGUFFile, devices: [ComputeDevice]) -> OffloadPlan.Facts {
    let blocks = min(
      file.architectureInteger("block_count") ?? file.tensorBytes.impliedBlockCount, GGUFTensorBytes.maximumBlock + 1)
    let window = effectiveContextSize(trainedContextLength: file.architectureInteger("context_length"))
    let compute = OffloadPlan.computeEstimate(
      batch: min(max(1, batchSize), window), window: window,
      vocabulary: file.metadata["tokenizer.ggml.tokens"]?.array?.count ?? 0,
      heads: file.architectureInteger("attention.head_count") ?? 0,
      embedding: file.architectureInteger("embedding_length") ?? 0)
    return OffloadPlan.Facts(
      devices: devices, blockBytes: file.tensorBytes.blockBytes(count: blocks),
      outputBytes: file.tensorBytes.outputLayer, contextBytes: kvCacheBytes(for: file), computeBytes: compute)
  }

  /// What `gpu` comes to for `file` on this machine's devices now.
  func offloadPlan(for file: GGUFFile) -> OffloadPlan {
    OffloadPlan.decide(gpu, facts: offloadFacts(for: file, devices: DeviceRegistry.devices()))
  }
}
