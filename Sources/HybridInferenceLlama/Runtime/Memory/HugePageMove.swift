import CLlama
import HybridInferenceCore
import Synchronization

/// Moves a model's weights and each context's KV cache onto 2 MiB pages on
/// the first step the context decodes, when the weights were read in
/// (`MemoryPlan`).
///
/// llama.cpp's C API gives no address of its buffers. Its graph scheduler's
/// eval callback (`cb_eval`) is shown every node, with its sources, before
/// the node is computed; on a context's first step the callback moves each
/// buffer it meets, once:
/// - the weights (buffers of `WEIGHTS` usage) with `HugePages.collapse`, once
///   per model (`WeightPages`): the kernel copies them, once;
/// - the KV cache (the buffer of llama.cpp's `cache_k_l*` / `cache_v_l*`
///   tensors) with `HugePages.rehouse`, in every context, since one is made
///   anew as its conversations grow: the empty part is dropped and faulted
///   in again as fresh huge pages, what a grown context loaded from the
///   last is copied across.
///   At depth a step reads every cell's K and V, strided across the cache
///   without flash attention, and on 4 KiB pages that walks the TLB.
///
/// Only buffers in CPU memory (a GPU's never reach `madvise`, and
/// `MemoryPlan` plans nothing for a GPU build). The callback answers "not
/// needed" for every node, so on the CPU backend llama.cpp computes each
/// split in one piece as it would without one (ggml-backend.cpp,
/// `ggml_backend_sched_compute_splits`). It is shown a split's nodes before
/// computing any of them, and a node that writes the KV cache names it as a
/// source, so the cache is moved before this step writes it (and a move
/// keeps every byte in any case, nothing else touching the buffer while it
/// runs); after `finish()` each node costs a call and one atomic load.
///
/// One per `BatchedContext` (`reset()` when its llama context is made again)
/// or per calibration context. Its address is the callback's user data, so
/// it must outlive the llama context it was installed in.
final class HugePageMove: Sendable {
  /// What one context's first step moved.
  struct Report: Equatable, Sendable {
    /// Bytes of weights moved onto huge pages.
    var bytes = 0
    /// Weight buffers the kernel would not move (all or part of them).
    var refused = 0
    /// Time spent in `madvise` on the weights: the kernel copies each 2 MiB.
    var time = Duration.zero
    /// Bytes of KV cache rehoused.
    var cacheBytes = 0
    /// Time spent rehousing the KV cache.
    var cacheTime = Duration.zero

    /// The whole time this step spent moving memory.
    var totalTime: Duration { time + cacheTime }
  }

  private struct Found {
    /// Whether the current context computed anything yet.
    var visited = false
    /// The KV cache buffers rehoused in the current context.
    var caches: Set<UInt> = []
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
    let move = Unmanaged<HugePageMove>.fromOpaque(userData).takeUnretainedValue()
    if !move.finished.load(ordering: .acquiring) { move.visit(tensor.pointee) }
    return false
  }

  private func visit(_ node: ggml_tensor) {
    found.withLock { $0.visited = true }
    let sources = node.src
    for source in [
      sources.0, sources.1, sources.2, sources.3, sources.4, sources.5, sources.6, sources.7, sources.8, sources.9,
    ] {
      guard let source else { continue }
      let owner = source.pointee.view_src ?? source
      guard let buffer = owner.pointee.buffer else { continue }
      if ggml_backend_buffer_get_usage(buffer) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS {
        visit(buffer)
      } else if HugePages.adviceWorks, Self.isCache(owner.pointee) {
        visitCache(buffer)
      }
    }
  }

  /// llama.cpp names its KV cache tensors `cache_k_l<layer>` and
  /// `cache_v_l<layer>` (a tag after `cache_` for a second cache). Named,
  /// not inferred from usage: an adapter's or a control vector's buffer is
  /// of the same usage and holds data loaded from a file.
  private static func isCache(_ tensor: ggml_tensor) -> Bool {
    withUnsafeBytes(of: tensor.name) { name in name.starts(with: cachePrefix) }
  }

  private static let cachePrefix = Array("cache_".utf8)

  /// Rehouses a KV cache buffer the first time this context meets it.
  private func visitCache(_ buffer: ggml_backend_buffer_t) {
    found.withLock { found in
      guard found.caches.insert(UInt(bitPattern: UnsafeRawPointer(buffer))).inserted,
        let (moved, time) = Self.timed(buffer, HugePages.rehouse)
      else { return }
      found.report.cacheTime += time
      found.report.cacheBytes += moved ?? 0
    }
  }

  /// Collapses a weights buffer the first time the model meets it.
  private func visit(_ buffer: ggml_backend_buffer_t) {
    guard let weights else { return }
    found.withLock { found in
      guard weights.firstVisit(UInt(bitPattern: UnsafeRawPointer(buffer))),
        let (moved, time) = Self.timed(buffer, HugePages.collapse)
      else { return }
      found.report.time += time
      switch moved {
      case nil: break
      case 0?: found.report.refused += 1
      case let moved?: found.report.bytes += moved
      }
    }
  }

  /// `move` applied to a buffer in CPU memory, and how long it took; nil
  /// for a buffer elsewhere (or with no base), which is never advised.
  private static func timed(
    _ buffer: ggml_backend_buffer_t, _ move: (UnsafeMutableRawPointer, Int) -> Int?
  ) -> (moved: Int?, time: Duration)? {
    guard inCPUMemory(buffer), let base = ggml_backend_buffer_get_base(buffer) else { return nil }
    let start = ContinuousClock.now
    let moved = move(base, Int(clamping: ggml_backend_buffer_get_size(buffer)))
    return (moved, ContinuousClock.now - start)
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

  /// Logs what a context's first step moved, beside why; nothing when it
  /// moved nothing.
  static func log(_ moved: Report, reason: String) {
    var parts = ["memory: \(reason)"]
    if moved.bytes > 0 || moved.refused > 0 {
      let refused = moved.refused == 0 ? "" : ", \(moved.refused) buffer(s) the kernel kept on 4 KiB pages"
      parts.append("weights \(moved.bytes >> 20) MiB on 2 MiB pages (madvise \(milliseconds(moved.time)) ms)\(refused)")
    }
    if moved.cacheBytes > 0 {
      let time = milliseconds(moved.cacheTime)
      parts.append("KV cache \(moved.cacheBytes >> 20) MiB advised onto 2 MiB pages (\(time) ms)")
    }
    guard parts.count > 1 else { return }
    LlamaBackend.logSink.current.log(
      LogRecord(level: .info, category: .local, message: parts.joined(separator: "; ")))
  }

  private static func milliseconds(_ time: Duration) -> Int { Int(time / .milliseconds(1)) }
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
