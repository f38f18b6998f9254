/// How a `LocalSystemModel` holds its weights in memory
/// (`LocalSystemModel.memory`).
///
/// A decode step reads every weight. On 4 KiB pages that is a page-table walk
/// for each 4 KiB the processor's TLB no longer covers; on 2 MiB pages, one
/// for every 2 MiB. On a 2-core AMD EPYC, llama.cpp's own llama-bench decoded
/// SmolLM2 3.7-6.8% faster with its memory on 2 MiB pages than with its
/// default, weights mapped from the file on 4 KiB pages, and the library's
/// streamed decode 1-6% faster with its weights on them (two paired runs,
/// RESULTS.md §1d).
///
/// The pages are asked for after the fact, with `madvise(MADV_COLLAPSE)`
/// (Linux 6.1 and later), on the model's first decode: the kernel copies
/// each 2 MiB-aligned part of the weights onto a huge page whatever its
/// transparent-huge-page setting. That costs once per model (SmolLM2's
/// 90 MiB took 170-330 ms on that 2-core VM): in `prepare()` where the
/// flash-attention calibration runs there (`FlashAttention.automatic` on
/// the CPU, outside its time budget), else in the first request; the
/// KV cache is left on 4 KiB pages, since a context is made anew as its
/// conversations grow and each would pay the copy again. A kernel that
/// cannot leaves the memory as it is, and the log says what moved (`.info`,
/// `LocalSystemModel.setLlamaLogHandler(_:)`).
public enum ModelMemory: Sendable, Hashable, CustomStringConvertible {
  /// `.hugePages` for a model file of at most a quarter of the memory this
  /// process may use (the machine's, or its cgroup's limit when lower) on a
  /// kernel that collapses pages on request; otherwise `.mapped`, whose
  /// pages the kernel can drop and read again under memory pressure.
  case automatic
  /// The weights read into the process's own memory rather than mapped from
  /// the file, and moved onto 2 MiB pages. That memory is not shared with the
  /// page cache or other processes, and the kernel cannot drop it under
  /// pressure. The same as `.mapped` when the kernel does not collapse pages
  /// on request, and for a llama.cpp built for a GPU.
  case hugePages
  /// llama.cpp's default: the weights mapped from the file, on 4 KiB pages,
  /// and nothing asked of the kernel.
  case mapped

  /// `automatic`, `hugePages` or `mapped`.
  public var description: String {
    switch self {
    case .automatic: "automatic"
    case .hugePages: "hugePages"
    case .mapped: "mapped"
    }
  }
}
