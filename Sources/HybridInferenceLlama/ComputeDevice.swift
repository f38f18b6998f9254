/// A device the linked llama.cpp can compute on: the CPU, and each GPU or
/// accelerator of the backends it was built with, as ggml's device registry
/// lists them (`LocalSystemModel.computeDevices`).
public struct ComputeDevice: Sendable, Hashable {
  /// What kind of device it is.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    let name: String

    /// The CPU, computing in system memory.
    public static let cpu = Kind(name: "cpu")
    /// A GPU with memory of its own.
    public static let gpu = Kind(name: "gpu")
    /// A GPU that shares system memory with the CPU.
    public static let integratedGPU = Kind(name: "integratedGPU")
    /// An accelerator that works beside the CPU backend (BLAS, AMX): it holds
    /// no layers of its own.
    public static let accelerator = Kind(name: "accelerator")

    /// Whether llama.cpp can put layers on a device of this kind.
    var holdsLayers: Bool { self == .gpu || self == .integratedGPU }

    /// `cpu`, `gpu`, `integratedGPU` or `accelerator`.
    public var description: String { name }
  }

  /// The backend's name for the device (`CPU`, `CUDA0`, `Vulkan0`, `Metal`):
  /// what the log and `OffloadDecision.deviceName` call it.
  public let name: String
  /// The backend's description of it: the processor's or the card's model name.
  public let description: String
  /// CPU, GPU, integrated GPU or accelerator: only the two GPU kinds hold layers.
  public let kind: Kind
  /// The device's memory in bytes; nil when the backend does not say.
  public let memoryBytes: Int?
  /// The part of it free when the registry was read; nil when the backend
  /// does not say.
  public let freeMemoryBytes: Int?
}
