import CLlama
import Foundation
import Synchronization

/// A llama context and its KV cache.
///
/// Contexts belong to a model's `ContextPool` and are leased to one request at
/// a time; sessions own none while idle. The context itself is created on
/// the first job, on a compute lane (`ComputeLanes`), off Swift's cooperative
/// threads.
///
/// `@unchecked Sendable` with a written reason: every llama.cpp pointer and
/// the cache bookkeeping are touched only while `jobLock` is held, by one job
/// at a time on the lane thread its request leased, so jobs run in order as on
/// an actor (see `ComputeLanes` for why the threads are shared). The request's
/// cancellation flag, the busy count and the pending forget are atomic and may
/// be read from any thread.
final class LlamaContext: @unchecked Sendable {
  /// How a context is made.
  struct Settings: Equatable, Sendable {
    /// Requested window; llama.cpp rounds it up to a multiple of 256.
    var contextSize: Int
    var batchSize: Int
    var threads: Int
  }

  let model: LlamaModel
  let settings: Settings
  private let busy = Atomic<Int>(0)
  private let jobLock = NSLock()
  /// Set when the owning session ended while a job held the context; the next job forgets first.
  private let forgetPending = Atomic<Bool>(false)

  // Touched under `jobLock` only.
  private var pointer: OpaquePointer?
  /// The tokens whose keys and values the context holds, in order.
  var cachedTokens: [llama_token] = []
  /// How many leading cached tokens are instructions only, which another
  /// session with the same instructions may reuse; the rest is private.
  var shareablePrefix = 0
  /// The running request's flag, read by llama.cpp's abort callback.
  private var activeFlag: CancellationFlag?

  init(model: LlamaModel, settings: Settings) {
    self.model = model
    self.settings = settings
  }

  deinit {
    if let pointer { llama_free(pointer) }
  }

  /// Whether no job is queued or running: tests use it to see that a
  /// cancelled generation really stopped computing.
  var isIdle: Bool { busy.load(ordering: .acquiring) == 0 }

  /// Runs `job` on `lane` with the context created, and returns its result.
  /// Cancelling the calling task stops the job between compute steps.
  func run<Value: Sendable>(
    on lane: LlamaThread,
    _ job: @escaping @Sendable (_ context: OpaquePointer, _ size: Int) throws -> Value
  ) async throws -> Value {
    let flag = CancellationFlag()
    busy.add(1, ordering: .releasing)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        lane.async {
          self.jobLock.lock()
          self.activeFlag = flag
          LlamaBackend.inFlight.enter()
          defer {
            self.activeFlag = nil
            LlamaBackend.inFlight.leave()
            self.jobLock.unlock()
            self.busy.subtract(1, ordering: .releasing)
          }
          continuation.resume(
            with: Result {
              if self.forgetPending.exchange(false, ordering: .acquiring) { self.keep(prefix: self.shareablePrefix) }
              if self.isCancelled { throw CancellationError() }
              let context = try self.created()
              return try job(context, Int(llama_n_ctx(context)))
            })
        }
      }
    } onCancel: {
      flag.set()
    }
  }

  /// Drops everything after the shareable prefix (a session has ended: what
  /// it said stays with it): at once when no job holds the context (a fast
  /// KV-cache edit), else as the next job's first step.
  func forgetPrivateTokens() {
    forgetPending.store(true, ordering: .releasing)
    guard jobLock.try() else { return }
    defer { jobLock.unlock() }
    if forgetPending.exchange(false, ordering: .acquiring) { keep(prefix: shareablePrefix) }
  }

  /// True when the running request was cancelled or the process is exiting.
  var isCancelled: Bool { (activeFlag?.isSet ?? false) || LlamaBackend.inFlight.isStopping }

  private func created() throws(HybridInferenceError) -> OpaquePointer {
    if let pointer { return pointer }
    var params = llama_context_default_params()
    params.n_ctx = UInt32(settings.contextSize)
    params.n_batch = UInt32(settings.batchSize)
    params.n_ubatch = UInt32(settings.batchSize)
    params.n_seq_max = 1
    params.n_threads = Int32(settings.threads)
    params.n_threads_batch = Int32(settings.threads)
    params.no_perf = true
    guard let context = llama_init_from_model(model.pointer, params) else {
      throw .generationFailed("llama.cpp could not create a context of \(settings.contextSize) tokens")
    }
    pointer = context
    return context
  }

  /// Keeps the first `count` cached tokens and drops the rest from the KV cache.
  func keep(prefix count: Int) {
    guard count < cachedTokens.count else { return }
    guard let pointer else { return }
    if !llama_memory_seq_rm(llama_get_memory(pointer), 0, llama_pos(count), -1) {
      clearCache()
      return
    }
    cachedTokens.removeSubrange(count...)
    shareablePrefix = min(shareablePrefix, count)
  }

  /// Empties the KV cache and its bookkeeping: the known state after a
  /// partial removal or a failed decode.
  func clearCache() {
    if let pointer { llama_memory_clear(llama_get_memory(pointer), true) }
    cachedTokens.removeAll()
    shareablePrefix = 0
  }

  /// Installs (or removes) llama.cpp's abort callback, which lets a long
  /// prefill stop between compute steps when the request is cancelled.
  ///
  /// Only during prefill: llama.cpp calls it once per graph node while the
  /// other threads wait at a barrier, which slowed single-token decoding by
  /// about 10%; there the loop checks for cancellation between tokens instead.
  func setAbortCallback(_ context: OpaquePointer, enabled: Bool) {
    guard enabled else {
      llama_set_abort_callback(context, nil, nil)
      return
    }
    llama_set_abort_callback(
      context,
      { userData in
        guard let userData else { return false }
        return Unmanaged<LlamaContext>.fromOpaque(userData).takeUnretainedValue().isCancelled
      }, Unmanaged.passUnretained(self).toOpaque())
  }
}

/// One request's "stop now", set from any thread and read by the decode loop.
final class CancellationFlag: Sendable {
  private let value = Atomic<Bool>(false)

  var isSet: Bool { value.load(ordering: .relaxed) }

  func set() { value.store(true, ordering: .relaxed) }
}
