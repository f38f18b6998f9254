/// Where a loaded `LocalSystemModel`'s layers are (`LocalSystemModel.offload`):
/// what its `GPUOffload` came to on this machine when the file was loaded.
///
/// Layers are counted as llama.cpp counts them: the model's blocks and the
/// output layer (`GPUOffload`). The same decision is logged at `.info` when
/// the model loads (`LocalSystemModel.setLlamaLogHandler(_:)`), with why.
public struct OffloadDecision: Sendable, Hashable, CustomStringConvertible {
  /// The device the offloaded layers are on, as the registry names it
  /// (`ComputeDevice.name`); `CPU` when none is offloaded.
  public let deviceName: String
  /// The layers on that device: 0 when the model runs on the CPU.
  public let layers: Int
  /// The model's layers.
  public let totalLayers: Int
  /// The bytes the offloaded layers take on the device, with their KV cache
  /// and llama.cpp's compute buffer: an estimate from the file's tensor
  /// table, made before the load; 0 when none is offloaded.
  public let deviceBytes: Int

  /// Whether any layer is on a GPU.
  public var isOffloaded: Bool { layers > 0 }

  /// `12 of 33 layers on Vulkan0 (812 MiB)`, or `CPU (0 of 33 layers offloaded)`.
  public var description: String {
    guard isOffloaded else { return "CPU (0 of \(totalLayers) layers offloaded)" }
    return "\(layers) of \(totalLayers) layers on \(deviceName) (\(deviceBytes >> 20) MiB)"
  }

  /// The decision a plan came to.
  init(_ plan: OffloadPlan) {
    deviceName = plan.deviceName ?? "CPU"
    layers = plan.layers
    totalLayers = plan.totalLayers
    deviceBytes = plan.layers > 0 ? plan.deviceBytes : 0
  }

  /// What a saved prompt state's key reads of it (`PromptCacheKey`): the
  /// state of a context computed on one backend is not loaded into another's.
  var cacheKeyText: String { "\(deviceName) \(layers)/\(totalLayers)" }
}
