import CLlama

/// What `FlashAttention.automatic` turns into: a rule on facts known at load,
/// no timing at run time.
///
/// The rule, from llama-bench `-fa 0` against `-fa 1` (Benchmarks/RESULTS.md
/// §1d, `scripts/attention-rule-data.sh`): on the CPU backend the fused kernel
/// pays off deep into a conversation only for wide attention heads. Heads 64
/// wide (SmolLM2) decode 2.3-2.7x faster with it off at 1,024 tokens on a
/// 2-core Intel Xeon, and are even to 11% faster with it on on an AMD EPYC;
/// 96 wide lose 23-25% with it on at 1,024-3,000
/// tokens on the EPYC; 128, 192 and 256 wide gain with it on there (+4% and
/// +17% at 1,024 tokens for random-weight llamas 128 and 256 wide, +14% and
/// +34% at 1,024 and 3,000 for SmolLM2's weights in heads 192 wide), and
/// Gemma 3 270M (256) is even or a little faster with it on on both. No one
/// setting is right for 64-wide heads on both CPUs; off loses at most 11% on
/// one and wins 2.7x on the other, so narrow heads get it off.
///
/// A rule and not a calibration: it is free, the same on every run (a few
/// decode steps timed at load read the noise of shared cores as often as the
/// difference, and filling a KV cache to a depth where attention matters
/// costs a second or more), and it gives the prompt cache a key that does not
/// change from one process to the next.
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
