/// How a `LocalSystemModel` holds its weights and KV cache in memory
/// (`LocalSystemModel.memory`).
///
/// A decode step reads every weight, and every cached K and V of its
/// sequence. On 4 KiB pages that is a page-table walk for each 4 KiB the
/// processor's TLB does not cover; on 2 MiB pages, one for every 2 MiB. With
/// weights and KV cache on 2 MiB pages, llama-bench and the library's
/// streamed decode both run a few percent faster than on llama.cpp's default
/// (weights mapped from the file on 4 KiB pages), the KV cache mattering
/// more the deeper the conversation (Benchmarks/RESULTS.md, "Prefill and
/// decode beside llama-bench").
///
/// The pages are asked for after the fact, on a context's first decode. The
/// weights, once per model, with `madvise(MADV_COLLAPSE)` (Linux 6.1 and
/// later): the kernel copies each 2 MiB-aligned part onto a huge page
/// whatever its transparent-huge-page setting (a copy of tens to hundreds of
/// milliseconds for a small model), in `prepare()` where the flash-attention
/// calibration runs there (`FlashAttention.automatic` on the CPU, outside
/// its time budget), else in the first request. The KV cache, in every
/// context (one is made anew as its conversations grow), where the THP
/// setting is `always` or `madvise`: its empty part is advised, dropped and
/// faulted in again as fresh huge pages, and what a grown context loaded is
/// copied across. A kernel
/// that cannot leaves the memory as it is, and the log says what moved
/// (`.info`, `LocalSystemModel.setLlamaLogHandler(_:)`).
public enum ModelMemory: Sendable, Hashable, CustomStringConvertible {
  /// `.hugePages` for a model file of at most a quarter of the memory this
  /// process may use (the machine's, or its cgroup's limit when lower) on a
  /// kernel that collapses pages on request; otherwise `.mapped`, whose
  /// pages the kernel can drop and read again under memory pressure.
  case automatic
  /// The weights read into the process's own memory rather than mapped from
  /// the file, and moved onto 2 MiB pages with the KV cache. That memory is not shared with the
  /// page cache or other processes, and the kernel cannot drop it under
  /// pressure. The same as `.mapped` when the kernel does not collapse pages
  /// on request, and where layers go to a GPU (`GPUOffload`).
  case hugePages
  /// llama.cpp's default: the weights mapped from the file, weights and KV
  /// cache on 4 KiB pages, and nothing asked of the kernel.
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
