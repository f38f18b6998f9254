import HybridInferenceLlama

/// The value of `--gpu`: how many of the on-device model's layers go to a
/// GPU (`GPUOffload`).
///
/// `auto` is the library's `.automatic` (every layer that fits the GPU's free
/// memory), `none` keeps the CPU, and a number asks for that many layers,
/// counted as llama.cpp counts them (the blocks and the output layer).
public enum GPUArgument {
  /// The largest layer count accepted: llama.cpp counts layers in an `Int32`.
  public static let maximumLayers = Int(Int32.max)

  /// What the flag expects, for its usage error.
  static let expected = "auto, none or a number of layers in 0...\(maximumLayers)"

  /// The offload `value` names; a usage error naming what is expected otherwise.
  public static func parse(_ value: String) throws(CommandError) -> GPUOffload {
    switch value {
    case "auto": return .automatic
    case "none": return .none
    default:
      guard value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let layers = Int(value),
        (0...maximumLayers).contains(layers)
      else {
        throw .usage("option '--gpu' needs \(expected), got '\(value)'")
      }
      return .layers(layers)
    }
  }
}
