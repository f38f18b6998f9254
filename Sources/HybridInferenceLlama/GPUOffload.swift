/// How many of a `LocalSystemModel`'s layers llama.cpp puts on a GPU
/// (`LocalSystemModel.gpu`).
///
/// Layers are counted as llama.cpp counts them: each of the model's blocks,
/// and the output layer (the final norm and the projection to the
/// vocabulary) as one more, so that a model of 32 blocks has 33. They are
/// offloaded from the last: `.layers(1)` puts the output layer on the GPU,
/// `.layers(33)` everything but the token embeddings, which llama.cpp always
/// keeps on the CPU. The KV cache of an offloaded layer lives on the GPU
/// with it.
///
/// A GPU is there only when the llama.cpp the library is linked to was built
/// with a GPU backend (CUDA, Vulkan, Metal, ...): `LocalSystemModel.computeDevices`
/// lists what it offers. With none, every setting runs on the CPU.
public struct GPUOffload: Sendable, Hashable, CustomStringConvertible {
  /// What is asked for.
  enum Request: Sendable, Hashable {
    case automatic
    case layers(Int)
  }

  let request: Request

  /// Every layer that fits the GPU's free memory together with its share of
  /// the KV cache and llama.cpp's compute buffer, else as many as fit, else
  /// none (the rule is `OffloadPlan`'s). The GPU is a discrete one if there is
  /// one, else an integrated one (llama.cpp's own preference), the one with
  /// the most free memory among them. On a machine without a GPU, the CPU.
  public static let automatic = GPUOffload(request: .automatic)

  /// Nothing on a GPU: weights, KV cache and computation on the CPU.
  public static let none = GPUOffload(request: .layers(0))

  /// `n` layers on the GPU (at most the model's layer count; see above for
  /// how layers are counted), whether they fit or not: a model that does not
  /// fit fails to load there and loads on the CPU instead. Less than zero
  /// makes `prepare()` and every request throw `invalidOptions`.
  public static func layers(_ n: Int) -> GPUOffload { GPUOffload(request: .layers(n)) }

  /// `automatic`, `none` or `layers(n)`.
  public var description: String {
    switch request {
    case .automatic: "automatic"
    case .layers(0): "none"
    case .layers(let count): "layers(\(count))"
    }
  }
}
