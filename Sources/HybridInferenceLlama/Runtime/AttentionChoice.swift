import CLlama

/// What `FlashAttention.automatic` turns into: a rule on facts known at load,
/// no timing at run time.
///
/// The rule, from llama-bench `-fa 0` against `-fa 1` on a 2-core Xeon (the
/// figures are in Benchmarks/RESULTS.md, "Attention at depth"): on the CPU
/// backend the fused kernel pays off only for wide attention heads. SmolLM2
/// (heads 64 wide) and the tiny test model (16) decode faster with it off at
/// every depth, by 2-3x at 1,024 tokens; Gemma 3 270M (256) is as fast or
/// faster with it on. A rule and not a calibration: it is free, the same on
/// every run (a calibration of a few decode steps reads the noise of shared
/// cores as often as the difference), and it gives the prompt cache a key that
/// does not change from one process to the next.
///
/// A GPU backend keeps llama.cpp's own choice (`LLAMA_FLASH_ATTN_TYPE_AUTO`,
/// on where the device supports it): nothing here was measured there.
enum AttentionChoice {
  /// The narrowest attention head for which the CPU backend gets the fused
  /// kernel.
  static let minimumCPUHeadSize = 128

  /// What the decision is made from, injected so that tests can state them.
  struct Facts: Sendable, Equatable {
    /// Width of one attention head (GGUF `attention.key_length`, else
    /// embedding / heads); nil when the file does not say.
    var headSize: Int?
    /// Whether llama.cpp runs the model on a GPU (or other accelerator).
    var offloadsToGPU: Bool
  }

  /// The setting given to llama.cpp and why, for the log.
  struct Decision: Sendable, Equatable {
    var type: llama_flash_attn_type
    var reason: String
  }

  /// The llama.cpp setting for `setting` on a model and backend with `facts`.
  static func decide(_ setting: FlashAttention, facts: Facts) -> Decision {
    switch setting {
    case .on: return Decision(type: LLAMA_FLASH_ATTN_TYPE_ENABLED, reason: "on (asked)")
    case .off: return Decision(type: LLAMA_FLASH_ATTN_TYPE_DISABLED, reason: "off (asked)")
    case .automatic: break
    }
    if facts.offloadsToGPU {
      return Decision(type: LLAMA_FLASH_ATTN_TYPE_AUTO, reason: "llama.cpp's choice (automatic, GPU backend)")
    }
    guard let head = facts.headSize, head >= minimumCPUHeadSize else {
      let size = facts.headSize.map { "\($0)" } ?? "unknown"
      return Decision(
        type: LLAMA_FLASH_ATTN_TYPE_DISABLED,
        reason: "off (automatic: CPU backend, attention heads \(size) wide, under \(minimumCPUHeadSize))")
    }
    return Decision(
      type: LLAMA_FLASH_ATTN_TYPE_ENABLED,
      reason: "on (automatic: CPU backend, attention heads \(head) wide, \(minimumCPUHeadSize) or more)")
  }
}
