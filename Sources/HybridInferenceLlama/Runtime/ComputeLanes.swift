import HybridInferenceCore
import HybridInferenceJinja

/// The threads that run llama.cpp's compute, shared by every context in the process.
///
/// Why shared, and not a thread per context: llama.cpp's CPU backend is built
/// with OpenMP (libgomp), which keeps a team of worker threads for each thread
/// that starts parallel work and counts every such thread in the process. As
/// soon as it counts more threads than cores (two contexts with a team of two
/// each, on two cores), libgomp stops spinning at its barriers after about a
/// hundred iterations and sleeps on a futex instead, at each of the hundreds of
/// barriers of one token's graph: streamed decode fell to a third of
/// llama-bench's tg128, with about 700 context switches per token.
///
/// A lane is one thread, leased by one context's scheduler at a time.
/// Schedulers run at once only as far as `ComputeBudget` lets them, so the
/// process holds at most `cores / threads` OpenMP teams however many contexts
/// exist, and the lanes are the same threads from one request to the next.
///
/// The lanes live behind a lock (`Locked`): requests lease and return them from any task.
final class ComputeLanes: Sendable {
  static let shared = ComputeLanes()

  private struct Lane {
    let thread: LlamaThread
    var busy: Bool
  }

  private let lanes = Locked<[Lane]>([])
  /// A new lane's stack: `LlamaThread.stackSize`; tests ask for one the OS
  /// cannot map, to see work whose lane is refused end.
  private let stackSize: Int

  init(stackSize: Int = LlamaThread.stackSize) {
    self.stackSize = stackSize
  }

  /// The first idle lane, or a new one when all are busy; nil when a new one
  /// is needed and the OS refuses its thread.
  func lease() -> LlamaThread? {
    lanes.withLock { lanes in
      if let index = lanes.firstIndex(where: { !$0.busy }) {
        lanes[index].busy = true
        return lanes[index].thread
      }
      guard let thread = LlamaThread(name: "hi.llama.\(lanes.count)", stackSize: stackSize) else { return nil }
      lanes.append(Lane(thread: thread, busy: true))
      return thread
    }
  }

  /// Ends a scheduler's (or a benchmark's) hold on `thread`.
  func giveBack(_ thread: LlamaThread) {
    lanes.withLock { lanes in
      if let index = lanes.firstIndex(where: { $0.thread === thread }) { lanes[index].busy = false }
    }
  }

  /// How many lanes exist (for tests: bounded by the compute budget).
  var count: Int { lanes.withLock { $0.count } }
}

/// llama.cpp compute outside a scheduler (the attention calibration, and
/// the benchmarks' direct calls beside the library): it takes its cores from
/// `ComputeBudget` like a scheduler, then a lane.
///
/// Why the budget as well as a lane: a lane is made whenever every lane is
/// busy, and a lane that computes starts an OpenMP team of its own. Taken
/// without the budget, compute that starts while a scheduler's lane is
/// still busy (a benchmark's direct call just after a stream's last token)
/// runs on a second lane, and from then on the process holds two teams on
/// the same cores: every decode after it, the library's own stream too,
/// falls well behind llama-bench (`local-benchmark probe` shows it). With the
/// budget, compute starts only once the previous holder has given its lane
/// back, so it reuses that lane.
package enum ComputeLane {
  /// Runs `body` on a compute lane once `threads` cores of the budget are
  /// free, and returns its result. A cancelled caller still waits its turn:
  /// the work runs either way, and running it out of turn is what makes a
  /// second team.
  /// - Throws: `HybridInferenceError.generationFailed` when a new lane was
  ///   needed and the OS refused its thread; `body` has not run then.
  package static func run<Value: Sendable>(
    threads: Int, _ body: @escaping @Sendable () -> Value
  ) async throws(HybridInferenceError) -> Value {
    try await run(threads: threads, on: .shared, body)
  }

  /// `run(threads:_:)` on `lanes` (tests give lanes whose threads the OS refuses).
  static func run<Value: Sendable>(
    threads: Int, on lanes: ComputeLanes, _ body: @escaping @Sendable () -> Value
  ) async throws(HybridInferenceError) -> Value {
    let budget = ComputeBudget.shared
    let cores = await Task.detached { (try? await budget.acquire(threads: threads)) ?? 0 }.value
    defer { budget.release(cores) }
    guard let lane = lanes.lease() else { throw .generationFailed(LlamaThread.refused) }
    let value = await withCheckedContinuation { continuation in
      lane.async { continuation.resume(returning: body()) }
    }
    // Given back before the cores, as a scheduler does, so whoever the
    // cores go to next finds this lane idle.
    lanes.giveBack(lane)
    return value
  }
}
