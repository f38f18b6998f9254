import CLlama
import HybridInferenceCore

extension LlamaModel {
  /// How a model file is loaded.
  struct LoadOptions: Sendable {
    /// Read into the process rather than mapped from the file (`MemoryPlan`).
    var weightsInMemory = false
    /// The offload asked for: the store keys a load by it (`LlamaModelStore.Key`).
    var gpu = GPUOffload.automatic
    /// What it came to on this machine's devices when the load was asked for.
    var offload = OffloadPlan(placement: .unchanged, totalLayers: 0, reason: "llama.cpp's default devices")
  }

  /// Loads the file at `path` with its layers where `plan` says, on the
  /// calling thread; returns the model (nil when llama.cpp could not load
  /// it) and where its layers went.
  ///
  /// A GPU can fail where the CPU would not (its memory taken meanwhile, a
  /// driver that refuses a buffer): a load on a GPU that returns nothing is
  /// tried again on the CPU, with the reason logged at `.warning`, unless the
  /// process is exiting. The placement used is logged at `.info`.
  static func load(
    _ path: String, params: llama_model_params, plan: OffloadPlan
  ) -> (OpaquePointer?, OffloadPlan) {
    var placed = plan
    var loaded = load(path, params: params, placement: plan.placement)
    if loaded == nil, plan.layers > 0, !LlamaBackend.inFlight.isStopping {
      let device = plan.deviceName ?? "the GPU"
      log(.warning, "GPU offload: \(device) could not load \(plan.layers) layers; loading on the CPU instead")
      placed = OffloadPlan(
        placement: .cpu, totalLayers: plan.totalLayers, reason: "\(device) failed to load the layers")
      loaded = load(path, params: params, placement: .cpu)
    }
    if loaded != nil {
      log(.info, "GPU offload: \(OffloadDecision(placed)): \(placed.reason)")
    }
    return (loaded, placed)
  }

  /// One load with `placement` applied to `params`: `.unchanged` leaves
  /// llama.cpp's device choice alone; `.cpu` gives it no device (an empty
  /// list, so that not even large batches go to a GPU); `.gpu` gives it that
  /// one device, the model's only one, and the layer count.
  private static func load(
    _ path: String, params: llama_model_params, placement: OffloadPlan.Placement
  ) -> OpaquePointer? {
    var params = params
    var devices: [ggml_backend_dev_t?] = [nil]
    switch placement {
    case .unchanged:
      return llama_model_load_from_file(path, params)
    case .cpu:
      params.n_gpu_layers = 0
    case .gpu(let name, let layers):
      // A device gone from the registry fails the load, which the caller retries on the CPU.
      guard let device = DeviceRegistry.device(named: name) else { return nil }
      devices = [device, nil]
      params.n_gpu_layers = Int32(clamping: layers)
      params.split_mode = LLAMA_SPLIT_MODE_NONE
      params.main_gpu = 0
    }
    return devices.withUnsafeMutableBufferPointer { list in
      params.devices = list.baseAddress
      return llama_model_load_from_file(path, params)
    }
  }

  private static func log(_ level: LogLevel, _ message: String) {
    LlamaBackend.logSink.current.log(LogRecord(level: level, category: .local, message: message))
  }
}
