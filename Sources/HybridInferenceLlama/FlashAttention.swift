/// Whether llama.cpp computes attention with its fused flash-attention kernel
/// (`LocalSystemModel.flashAttention`).
///
/// Which is faster depends on the model, the machine and the depth: the same
/// model can decode faster with the kernel on an empty cache and several
/// times slower with it a thousand tokens deep on one CPU, and be a near tie
/// on another (Benchmarks/RESULTS.md, "Attention at depth"). No rule on the
/// model alone is right on all of them, so `.automatic` measures.
public enum FlashAttention: Sendable, Hashable, CustomStringConvertible {
  /// Decided when the first context is made (`prepare()` or the first
  /// request). On the CPU backend, by a calibration: the model's decode step
  /// is timed both ways on this machine, with 0, 256, 1,024 and 3,072 tokens
  /// in the cache (fewer when the context is smaller; the depth is loaded as a
  /// state, not decoded, into contexts with an answer's room past it, as the
  /// library sizes a conversation that deep). llama.cpp's default (on) stands unless off is
  /// clearly faster (by over 5%) both in all, deeper steps weighing more,
  /// and at the depth where the slower setting falls furthest behind, so
  /// that a near tie, where the noise of one calibration on shared cores is
  /// as large, does not flip from one process to the next. Where the two
  /// cross (on over 5% faster at some depth and over 5% slower at the
  /// deepest depths), it is on for short conversations
  /// and off past the crossing, interpolated between the depths measured: a
  /// context is made again without the kernel when a turn starts past it,
  /// its conversations' cells rewritten for the other layout (not decoded
  /// again), and with it again once every conversation it holds is short
  /// again. A depth stops once its timed pairs settle it (three at least,
  /// two far apart, else five), and 3,072 is skipped when 0 and 1,024
  /// already fix its reading (on over 20% behind at 1,024, not clearly at 0).
  /// It costs under a second for SmolLM2-sized models on 2 cores
  /// (Benchmarks/RESULTS.md, "Attention at depth") and runs once per model
  /// file, llama.cpp build, CPU and thread count on a machine: the decision
  /// is stored in `$HYBRID_INFERENCE_ATTENTION_DIR`, else `attention/` in the
  /// set-up's cache (`$HYBRID_INFERENCE_CACHE`, else
  /// `$XDG_CACHE_HOME/hybrid-inference`, else `~/.cache/hybrid-inference`),
  /// and every later process reuses it, so that `.greedy` gives the same
  /// answer in each; with a `PromptCache.directory` it is stored there too,
  /// and the one found there wins for that cache's states. A model
  /// whose step takes over 60 ms with either setting, or whose K/V at that depth passes 128 MiB,
  /// has one step's attention alone timed instead (a graph of its layers'
  /// attention, which costs the same whatever the weights), the faster total
  /// winning; when attention alone is within 3%, or nothing can be measured, a rule
  /// decides: on for attention heads 128 or more wide, off below. Where
  /// layers go to a GPU (`GPUOffload`), llama.cpp's own choice
  /// stands. The decision and the times behind it are logged at `.info` to
  /// the handler of `LocalSystemModel.setLlamaLogHandler(_:)`.
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
