/// What `ModelMemory` comes to for one model file on this machine: whether
/// llama.cpp reads the weights in or maps them, and which of a context's
/// buffers move to 2 MiB pages (`HugePageCollapse`).
///
/// Decided from facts passed in (`Facts`), so that the rule is tested on
/// machines this one is not: a kernel without `MADV_COLLAPSE`, a cgroup limit,
/// a model larger than a quarter of memory.
struct MemoryPlan: Equatable, Sendable {
  /// Read into the process (`LLAMA_LOAD_MODE_NONE`) rather than mapped.
  var weightsInMemory: Bool
  /// Which buffers a context's first decode moves to 2 MiB pages.
  var collapse: HugePageCollapse.Scope
  /// Why, for the log.
  var reason: String

  /// What the decision reads about the file and the machine.
  struct Facts: Equatable, Sendable {
    /// The model file's size in bytes.
    var fileSize: Int
    /// The memory this process may use: the machine's, or its cgroup's
    /// limit when lower; nil when neither can be read.
    var memoryLimit: Int?
    /// Whether the kernel moves memory onto huge pages on request
    /// (`HugePages.collapseWorks`).
    var collapseWorks: Bool

    /// The facts for a file of `fileSize` bytes on this machine.
    static func current(fileSize: Int) -> Facts {
      Facts(fileSize: fileSize, memoryLimit: HugePages.memoryLimit(), collapseWorks: HugePages.collapseWorks)
    }
  }

  /// llama.cpp's default: mapped weights, nothing collapsed.
  static func mapped(_ reason: String) -> MemoryPlan {
    MemoryPlan(weightsInMemory: false, collapse: .none, reason: reason)
  }

  static func decide(_ memory: ModelMemory, facts: Facts) -> MemoryPlan {
    let inMemory = MemoryPlan(
      weightsInMemory: true, collapse: .weightsAndCache, reason: "weights read in, weights and KV cache on 2 MiB pages")
    switch memory {
    case .mapped:
      return .mapped("weights mapped from the file (asked for)")
    case .hugePages:
      return facts.collapseWorks ? inMemory : .mapped("weights mapped: this kernel does not collapse pages on request")
    case .automatic:
      guard facts.collapseWorks else {
        return .mapped("weights mapped: this kernel does not collapse pages on request")
      }
      // A quarter of memory at most: weights read in cannot be dropped under
      // memory pressure as mapped ones can.
      guard let limit = facts.memoryLimit, facts.fileSize <= limit / 4 else {
        return MemoryPlan(
          weightsInMemory: false, collapse: .cache,
          reason: "weights mapped (the file is over a quarter of memory, or memory is unknown), KV cache on 2 MiB pages"
        )
      }
      return inMemory
    }
  }
}
