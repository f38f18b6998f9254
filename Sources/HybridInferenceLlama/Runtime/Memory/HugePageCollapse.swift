import CLlama
import HybridInferenceCore
import Synchronization

/// Moves a model's weights onto 2 MiB pages (`HugePages.collapse`) on the
/// first step a context of it decodes, when they were read in (`MemoryPlan`).
///
/// llama.cpp's C API gives no address of the weights' buffers. Its graph
/// scheduler's eval callback (`cb_eval`) is shown every node, with its
/// sources, before the node is computed; on the first step the callback
/// collapses each buffer of `WEIGHTS` usage in CPU memory it meets, once
/// (a GPU's buffers never reach `madvise`, and `MemoryPlan` plans nothing
/// for a GPU build). The KV cache stays on 4 KiB pages: a collapse copies
/// (1.7-3.3 ms a MiB on a 2-core AMD EPYC VM), a context is made anew as
/// its conversations grow, and a 1,024-cell SmolLM2 cache (24 MiB) would
/// cost a turn more than its pages give back over a short answer. The
/// callback answers "not needed" for every node, so on the CPU backend
/// llama.cpp computes each split in one piece as it would without one
/// (ggml-backend.cpp, `ggml_backend_sched_compute_splits`); after `finish()`
/// each node costs a call and one atomic load.
///
/// One per `BatchedContext` (`reset()` when its llama context is made again)
/// or per calibration context; the weights' buffers already moved are the
/// model's to remember (`WeightPages`), so whichever context decodes first
/// moves them and no other advises them again. Its address is the callback's
/// user data, so it must outlive the llama context it was installed in.
final class HugePageCollapse: Sendable {
  /// What one context's first step moved.
  struct Report: Equatable, Sendable {
    /// Bytes moved onto huge pages.
    var bytes = 0
    /// Buffers the kernel would not move (all or part of them).
    var refused = 0
    /// Time spent in `madvise`: the kernel copies each 2 MiB.
    var time = Duration.zero
  }

  private struct Found {
    /// Whether the current context computed anything yet.
    var visited = false
    var report = Report()
  }

  /// The model's record of its weights' buffers moved so far; nil when
  /// nothing moves (`MemoryPlan.weightsInMemory` false).
  private let weights: WeightPages?
  private let finished = Atomic<Bool>(false)
  /// The buffers met so far. A mutex, not plain state: the callback runs on
  /// whichever thread decodes and `reset()` on the one that makes the context;
  /// the scheduler never lets the two overlap, but this does not rest on it.
  private let found = Mutex(Found())

  init(weights: WeightPages?) {
    self.weights = weights
  }

  /// Installs the callback in `params` (nothing when nothing moves).
  func install(in params: inout llama_context_params) {
    guard weights != nil else { return }
    params.cb_eval = Self.callback
    params.cb_eval_user_data = Unmanaged.passUnretained(self).toOpaque()
  }

  /// Starts over for a llama context made again.
  func reset() {
    found.withLock { $0 = Found() }
    finished.store(false, ordering: .releasing)
  }

  /// Ends the search after a context's decode; returns what it moved the
  /// first time, nil after. A decode that failed before computing a node
  /// leaves the search open for the next.
  func finish() -> Report? {
    guard weights != nil, !finished.load(ordering: .acquiring) else { return nil }
    return found.withLock { found -> Report? in
      guard found.visited else { return nil }
      finished.store(true, ordering: .releasing)
      return found.report
    }
  }

  private static let callback: ggml_backend_sched_eval_callback = { tensor, _, userData in
    guard let userData, let tensor else { return false }
    let collapse = Unmanaged<HugePageCollapse>.fromOpaque(userData).takeUnretainedValue()
    if !collapse.finished.load(ordering: .acquiring) { collapse.visit(tensor.pointee) }
    return false
  }

  private func visit(_ node: ggml_tensor) {
    found.withLock { $0.visited = true }
    let sources = node.src
    for source in [
      sources.0, sources.1, sources.2, sources.3, sources.4, sources.5, sources.6, sources.7, sources.8, sources.9,
    ] {
      guard let source else { continue }
      for case let buffer? in [source.pointee.buffer, source.pointee.view_src?.pointee.buffer] { visit(buffer) }
    }
  }

  private func visit(_ buffer: ggml_backend_buffer_t) {
    guard let weights, ggml_backend_buffer_get_usage(buffer) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS else { return }
    found.withLock { found in
      guard weights.firstVisit(UInt(bitPattern: UnsafeRawPointer(buffer))), Self.inCPUMemory(buffer),
        let base = ggml_backend_buffer_get_base(buffer)
      else { return }
      let start = ContinuousClock.now
      let moved = HugePages.collapse(base, size: Int(clamping: ggml_backend_buffer_get_size(buffer)))
      found.report.time += ContinuousClock.now - start
      switch moved {
      case nil: break
      case 0?: found.report.refused += 1
      case let moved?: found.report.bytes += moved
      }
    }
  }

  /// A buffer of the CPU device (repacked weights' buffer type included),
  /// not a GPU's, whose addresses `madvise` must never see. ggml's plain CPU
  /// buffer type names no device (a FIXME in ggml-backend.cpp) but is host
  /// memory; every GPU buffer type names its device.
  private static func inCPUMemory(_ buffer: ggml_backend_buffer_t) -> Bool {
    guard let type = ggml_backend_buffer_get_type(buffer) else { return false }
    guard let device = ggml_backend_buft_get_device(type) else { return ggml_backend_buft_is_host(type) }
    return ggml_backend_dev_type(device) == GGML_BACKEND_DEVICE_TYPE_CPU
  }

  /// Logs what a first step moved, beside why; nothing when it moved nothing
  /// (the weights were moved by an earlier context).
  static func log(_ moved: Report, reason: String) {
    guard moved.bytes > 0 || moved.refused > 0 else { return }
    let refused = moved.refused == 0 ? "" : ", \(moved.refused) buffer(s) the kernel kept on 4 KiB pages"
    let milliseconds = Int(moved.time / .milliseconds(1))
    LlamaBackend.logSink.current.log(
      LogRecord(
        level: .info, category: .local,
        message: "memory: \(reason); \(moved.bytes >> 20) MiB on 2 MiB pages (madvise \(milliseconds) ms)\(refused)"))
  }
}

/// The buffers of one model's weights already moved to 2 MiB pages (or
/// refused), kept by `LlamaModel`, whose buffers' addresses live as long as
/// it does. A mutex: contexts of one model decode on different threads.
final class WeightPages: Sendable {
  private let moved = Mutex<Set<UInt>>([])

  /// True the first time `buffer` is seen.
  func firstVisit(_ buffer: UInt) -> Bool {
    moved.withLock { $0.insert(buffer).inserted }
  }
}
