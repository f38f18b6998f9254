/// How a `LocalSystemModel` holds its weights and KV cache in memory
/// (`LocalSystemModel.memory`).
///
/// A decode step reads every weight and, deep into a conversation, most of the
/// KV cache. On 4 KiB pages that is a page-table walk for every 4 KiB the
/// processor's TLB no longer covers; on 2 MiB pages, one for every 2 MiB.
/// On a 2-core AMD EPYC, llama.cpp's own llama-bench decoded SmolLM2 3.7-6.8%
/// faster with its weights read in and on 2 MiB pages than with its default,
/// weights mapped from the file on 4 KiB pages (paired runs, RESULTS.md §1d).
///
/// The pages are asked for after the fact, with `madvise(MADV_COLLAPSE)`
/// (Linux 6.1 and later), on a context's first decode: the kernel copies
/// each 2 MiB-aligned part of a buffer onto a huge page whatever its
/// transparent-huge-page setting, about 30 ms for 100 MiB, once per model
/// and context. A kernel that cannot leaves the memory on 4 KiB pages and the
/// log says so (`.info`, `LocalSystemModel.setLlamaLogHandler(_:)`).
public enum ModelMemory: Sendable, Hashable, CustomStringConvertible {
  /// `.hugePages` for a model file of at most a quarter of the memory this
  /// process may use (the machine's, or its cgroup's limit when lower) on a
  /// kernel that collapses pages on request; otherwise the weights stay
  /// mapped from the file (which the kernel can drop and read again under
  /// memory pressure) and only the KV cache moves to 2 MiB pages.
  case automatic
  /// The weights read into the process's own memory rather than mapped from
  /// the file, and the weights and KV cache moved onto 2 MiB pages. That
  /// memory is not shared with the page cache or other processes, and the
  /// kernel cannot drop it under pressure. When the kernel does not collapse
  /// pages on request, the same as `.mapped`.
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
