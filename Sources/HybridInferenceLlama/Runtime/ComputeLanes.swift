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

  /// The first idle lane, or a new one when all are busy.
  func lease() -> LlamaThread {
    lanes.withLock { lanes in
      if let index = lanes.firstIndex(where: { !$0.busy }) {
        lanes[index].busy = true
        return lanes[index].thread
      }
      let thread = LlamaThread(name: "HybridInference.llama.\(lanes.count)")
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

/// For the benchmarks: llama.cpp called directly (beside the library, in the
/// same process) must run on a compute lane too, or its OpenMP team would be
/// one too many and slow both down (see `ComputeLanes`).
package enum ComputeLane {
  /// Runs `body` on a leased compute lane and returns its result.
  package static func run<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    let lane = ComputeLanes.shared.lease()
    defer { ComputeLanes.shared.giveBack(lane) }
    return await withCheckedContinuation { continuation in
      lane.async { continuation.resume(returning: body()) }
    }
  }
}
