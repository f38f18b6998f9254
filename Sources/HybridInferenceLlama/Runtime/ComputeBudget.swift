import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// The process-wide cap on threads doing llama.cpp work.
///
/// Each running scheduler (one per model value with work, however many
/// sessions it batches) uses `threads` cores (its OpenMP team). Without a cap,
/// several models generating at once on two cores are more spinning threads
/// than cores and every one of them slows down; with it, a scheduler waits its
/// turn (first come, first served) until its threads fit into the machine's
/// cores. One budget for the process, like the cores it stands for, behind a
/// lock (`Locked`) because requests acquire and release it from any thread.
final class ComputeBudget: Sendable {
  static let shared = ComputeBudget(cores: ProcessInfo.processInfo.activeProcessorCount)

  private struct Waiter {
    let id: UInt64
    let cores: Int
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var free: Int
    var waiters: [Waiter] = []
    /// Requests cancelled before they queued: they must not queue at all.
    var cancelledEarly: Set<UInt64> = []
    var nextID: UInt64 = 0
  }

  /// The cores the budget hands out.
  let cores: Int
  private let state: Locked<State>

  init(cores: Int) {
    self.cores = max(1, cores)
    self.state = Locked(State(free: max(1, cores)))
  }

  /// Waits until `threads` cores are free (at most all of them), takes them,
  /// and returns how many to give back. Throws `CancellationError` if the
  /// waiting task is cancelled first.
  func acquire(threads: Int) async throws -> Int {
    let wanted = min(max(1, threads), cores)
    let id = state.withLock { state -> UInt64 in
      state.nextID += 1
      return state.nextID
    }
    defer { _ = state.withLock { $0.cancelledEarly.remove(id) } }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let verdict = state.withLock { state -> Bool? in
          if state.cancelledEarly.contains(id) { return false }
          if state.waiters.isEmpty, state.free >= wanted {
            state.free -= wanted
            return true
          }
          state.waiters.append(Waiter(id: id, cores: wanted, continuation: continuation))
          return nil
        }
        switch verdict {
        case true?: continuation.resume()
        case false?: continuation.resume(throwing: CancellationError())
        case nil: break
        }
      }
    } onCancel: {
      let waiter = state.withLock { state -> Waiter? in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
          state.cancelledEarly.insert(id)
          return nil
        }
        return state.waiters.remove(at: index)
      }
      waiter?.continuation.resume(throwing: CancellationError())
      release(0)  // the queue may move now that this waiter left it
    }
    return wanted
  }

  /// Gives `cores` back and wakes the waiters that now fit, in order.
  func release(_ cores: Int) {
    let woken = state.withLock { state -> [Waiter] in
      state.free += cores
      var woken: [Waiter] = []
      while let first = state.waiters.first, first.cores <= state.free {
        state.free -= first.cores
        woken.append(state.waiters.removeFirst())
      }
      return woken
    }
    woken.forEach { $0.continuation.resume() }
  }

  /// Cores free now (for tests).
  var freeCores: Int { state.withLock { $0.free } }

  /// Requests queued now (for tests).
  var waitingCount: Int { state.withLock { $0.waiters.count } }
}
