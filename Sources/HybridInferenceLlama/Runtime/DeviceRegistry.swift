import CLlama

/// ggml's device registry, read into `ComputeDevice` values.
///
/// The registry is filled when llama.cpp's backend starts, from the
/// backends the library was linked with (the CPU at least); it may also be
/// empty, and nothing here assumes a device. Free memory is read anew at
/// each call: it changes as other programs use the GPU.
enum DeviceRegistry {
  /// Every device, in the registry's order.
  static func devices() -> [ComputeDevice] {
    LlamaBackend.ensureInitialized()
    return LlamaBackend.inFlight.tracked {
      (0..<ggml_backend_dev_count()).compactMap { index in ggml_backend_dev_get(index).map(describe) }
    }
  }

  /// The device the registry calls `name`, for a model's load.
  static func device(named name: String) -> ggml_backend_dev_t? {
    LlamaBackend.ensureInitialized()
    return ggml_backend_dev_by_name(name)
  }

  /// One device's facts. A device that reports no memory (0 of 0 bytes, as
  /// BLAS does) has neither size.
  private static func describe(_ device: ggml_backend_dev_t) -> ComputeDevice {
    var free = 0
    var total = 0
    ggml_backend_dev_memory(device, &free, &total)
    let kind: ComputeDevice.Kind =
      switch ggml_backend_dev_type(device) {
      case GGML_BACKEND_DEVICE_TYPE_CPU: .cpu
      case GGML_BACKEND_DEVICE_TYPE_GPU: .gpu
      case GGML_BACKEND_DEVICE_TYPE_IGPU: .integratedGPU
      default: .accelerator
      }
    let reports = total > 0
    return ComputeDevice(
      name: ggml_backend_dev_name(device).map { String(cString: $0) } ?? "",
      description: ggml_backend_dev_description(device).map { String(cString: $0) } ?? "",
      kind: kind, memoryBytes: reports ? Int(clamping: total) : nil,
      freeMemoryBytes: reports ? Int(clamping: free) : nil)
  }
}
