import CLlama
import Synchronization

/// Moves a llama context's weights and KV cache onto 2 MiB pages
/// (`HugePages.collapse`) on the first step it decodes (`MemoryPlan`).
///
/// llama.cpp's C API gives no address of a context's buffers. Its graph
/// scheduler's eval callback (`cb_eval`) is shown every node, with its
/// sources, before the node is computed; on the first step the callback
/// collapses each buffer it meets once: weights (`WEIGHTS` usage) when they
/// were read in, the KV cache (`ANY`, written through when it was cleared).
/// Never the compute buffer: it is sized for a full batch's logits and mostly
/// never written, and collapsing would make all of it resident. The callback
/// answers "not needed" for every node, so llama.cpp computes the graph as
/// it would without one; after `finish()` each node costs one atomic load.
///
/// One per `BatchedContext` (`reset()` when its llama context is made again)
/// or per calibration context. Its address is the callback's user data, so
/// it must outlive the llama context it was installed in.
final class HugePageCollapse: Sendable {
  /// Which buffers move.
  enum Scope: Equatable, Sendable {
    case none
    case cache
    case weightsAndCache
  }

  /// What one context's first step moved.
  struct Report: Equatable, Sendable {
    /// Bytes moved onto huge pages.
    var bytes = 0
    /// Buffers the kernel refused.
    var refused = 0
  }

  private struct Found {
    var buffers: Set<UInt> = []
    var report = Report()
  }

  let scope: Scope
  private let finished = Atomic<Bool>(false)
  /// The buffers met so far. A mutex, not plain state: the callback runs on
  /// whichever thread decodes and `reset()` on the one that makes the context;
  /// the scheduler never lets the two overlap, but this does not rest on it.
  private let found = Mutex(Found())

  init(scope: Scope) {
    self.scope = scope
  }

  /// Installs the callback in `params` (nothing for `.none`).
  func install(in params: inout llama_context_params) {
    guard scope != .none else { return }
    params.cb_eval = Self.callback
    params.cb_eval_user_data = Unmanaged.passUnretained(self).toOpaque()
  }

  /// Starts over for a llama context made again (new buffers).
  func reset() {
    found.withLock { $0 = Found() }
    finished.store(false, ordering: .releasing)
  }

  /// Ends the search after a context's decode; returns what moved the first
  /// time, nil after.
  func finish() -> Report? {
    guard scope != .none, !finished.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
    return found.withLock { $0.report }
  }

  private static let callback: ggml_backend_sched_eval_callback = { tensor, _, userData in
    guard let userData, let tensor else { return false }
    let collapse = Unmanaged<HugePageCollapse>.fromOpaque(userData).takeUnretainedValue()
    if !collapse.finished.load(ordering: .acquiring) { collapse.visit(tensor.pointee) }
    return false
  }

  private func visit(_ node: ggml_tensor) {
    var buffers = [node.buffer]
    let sources = node.src
    for source in [
      sources.0, sources.1, sources.2, sources.3, sources.4, sources.5, sources.6, sources.7, sources.8, sources.9,
    ] {
      guard let source else { continue }
      buffers.append(source.pointee.buffer)
      if let viewed = source.pointee.view_src { buffers.append(viewed.pointee.buffer) }
    }
    for case let buffer? in buffers { visit(buffer) }
  }

  private func visit(_ buffer: ggml_backend_buffer_t) {
    let key = UInt(bitPattern: UnsafeRawPointer(buffer))
    found.withLock { found in
      guard found.buffers.insert(key).inserted, moves(ggml_backend_buffer_get_usage(buffer)),
        let base = ggml_backend_buffer_get_base(buffer)
      else { return }
      switch HugePages.collapse(base, size: Int(clamping: ggml_backend_buffer_get_size(buffer))) {
      case nil: break
      case 0?: found.report.refused += 1
      case let moved?: found.report.bytes += moved
      }
    }
  }

  private func moves(_ usage: ggml_backend_buffer_usage) -> Bool {
    switch usage {
    case GGML_BACKEND_BUFFER_USAGE_WEIGHTS: scope == .weightsAndCache
    case GGML_BACKEND_BUFFER_USAGE_ANY: scope != .none
    default: false
    }
  }
}
