import CLlama
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
/// One per `BatchedContext` (`reset()` when its llama context is made again;
/// the weights it moved, which outlive that context, are not moved or
/// counted twice) or per calibration context. Its address is the callback's
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
    /// The weights' buffers met in any context of this owner.
    var buffers: Set<UInt> = []
    /// Whether the current context computed anything yet.
    var visited = false
    var report = Report()
  }

  /// Whether anything moves (`MemoryPlan.weightsInMemory`).
  let isEnabled: Bool
  private let finished = Atomic<Bool>(false)
  /// The buffers met so far. A mutex, not plain state: the callback runs on
  /// whichever thread decodes and `reset()` on the one that makes the context;
  /// the scheduler never lets the two overlap, but this does not rest on it.
  private let found = Mutex(Found())

  init(isEnabled: Bool) {
    self.isEnabled = isEnabled
  }

  /// Installs the callback in `params` (nothing when not enabled).
  func install(in params: inout llama_context_params) {
    guard isEnabled else { return }
    params.cb_eval = Self.callback
    params.cb_eval_user_data = Unmanaged.passUnretained(self).toOpaque()
  }

  /// Starts over for a llama context made again; the weights already met
  /// stay met.
  func reset() {
    found.withLock { $0 = Found(buffers: $0.buffers) }
    finished.store(false, ordering: .releasing)
  }

  /// Ends the search after a context's decode; returns what it moved the
  /// first time, nil after. A decode that failed before computing a node
  /// leaves the search open for the next.
  func finish() -> Report? {
    guard isEnabled, !finished.load(ordering: .acquiring) else { return nil }
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
    guard ggml_backend_buffer_get_usage(buffer) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS else { return }
    let key = UInt(bitPattern: UnsafeRawPointer(buffer))
    found.withLock { found in
      guard found.buffers.insert(key).inserted, Self.inCPUMemory(buffer),
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
}
