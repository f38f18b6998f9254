/// Whether llama.cpp computes attention with its fused flash-attention kernel
/// (`LocalSystemModel.flashAttention`).
///
/// Which is faster depends on the model and the machine: on a CPU, SmolLM2
/// (attention heads 64 wide) decodes 2-3x slower with it on once a thousand
/// tokens are in the KV cache, while Gemma 3 270M (heads 256 wide) is a little
/// faster with it on. llama.cpp's own default turns it on for the CPU backend
/// whatever the model, so the library decides instead (`.automatic`).
public enum FlashAttention: Sendable, Hashable, CustomStringConvertible {
  /// Decided when the context is made, from the model's attention head size
  /// and the backend (`AttentionChoice`), and logged at `.info` to the
  /// handler of `LocalSystemModel.setLlamaLogHandler(_:)`.
  case automatic
  /// Always the fused kernel.
  case on
  /// Never the fused kernel: attention as separate matrix products.
  case off

  /// `automatic`, `on` or `off`.
  public var description: String {
    switch self {
    case .automatic: "automatic"
    case .on: "on"
    case .off: "off"
    }
  }
}
