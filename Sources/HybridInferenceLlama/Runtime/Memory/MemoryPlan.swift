/// What `ModelMemory` comes to for one model file on this machine: the
/// weights read in and moved to 2 MiB pages with each context's KV cache
/// (`HugePageMove`), or mapped
/// from the file as llama.cpp does by default.
///
/// Decided from facts passed in (`Facts`), so that the rule is tested on
/// machines this one is not: a kernel without `MADV_COLLAPSE`, a cgroup limit,
/// a model larger than a quarter of memory, a GPU build.
struct MemoryPlan: Equatable, Sendable {
  /// Read into the process (`LLAMA_LOAD_MODE_NONE`) and moved to 2 MiB
  /// pages, rather than mapped; each context's KV cache is moved too.
  var weightsInMemory: Bool
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
    /// Whether layers go to a GPU (`OffloadPlan`), where the weights live
    /// in the device's memory, not pages of this process.
    var offloadsToGPU = false

    /// The facts for a file of `fileSize` bytes on this machine, of which
    /// `offloadsToGPU` says whether layers go to a GPU.
    static func current(fileSize: Int, offloadsToGPU: Bool) -> Facts {
      Facts(
        fileSize: fileSize, memoryLimit: HugePages.memoryLimit(), collapseWorks: HugePages.collapseWorks,
        offloadsToGPU: offloadsToGPU)
    }
  }

  static let readIn = MemoryPlan(
    weightsInMemory: true, reason: "weights read in, on 2 MiB pages with each context's KV cache")

  /// llama.cpp's default: mapped weights, nothing asked of the kernel.
  static func mapped(_ reason: String) -> MemoryPlan {
    MemoryPlan(weightsInMemory: false, reason: reason)
  }

  /// `facts` are gathered only when `memory` is not `.mapped`, which asks
  /// nothing of the machine (the kernel probe included).
  static func decide(_ memory: ModelMemory, facts gather: @autoclosure () -> Facts) -> MemoryPlan {
    if memory == .mapped { return .mapped("weights mapped from the file (asked for)") }
    let facts = gather()
    if facts.offloadsToGPU { return .mapped("weights mapped: layers go to a GPU") }
    guard facts.collapseWorks else { return .mapped("weights mapped: this kernel does not collapse pages on request") }
    // A quarter of memory at most: weights read in cannot be dropped under
    // memory pressure as mapped ones can.
    if memory == .automatic, facts.memoryLimit.map({ facts.fileSize > $0 / 4 }) ?? true {
      return .mapped("weights mapped: the file is over a quarter of memory, or memory is unknown")
    }
    return .readIn
  }

  /// The plan for a model loaded already: how its weights really were
  /// loaded (the facts, read again for each context, may have changed since
  /// the load, such as a cgroup's limit).
  static func loaded(_ model: LlamaModel) -> MemoryPlan {
    model.weightsInMemory ? .readIn : .mapped("weights mapped from the file")
  }
}
