import HybridInferenceCore

/// Waits for a shared task's value, but stops waiting as soon as the
/// waiting task is cancelled (`CancellationError`) or its deadline passes.
///
/// `Task.value` ignores the waiter's cancellation; a shared fetch must not be
/// cancelled for one waiter (the others still need it), and a cancelled
/// request, or one out of time, must still end promptly, even while a
/// provider hangs.
enum CancellableWait {
  /// `task`'s value, or `timedOut` thrown at `deadline`.
  static func value<Value: Sendable>(
    of task: Task<Value, any Error>, deadline: ContinuousClock.Instant, timedOut: HybridInferenceError
  ) async throws -> Value {
    let slot = Slot<Value>()
    let timer = Task {
      try await Task.sleep(until: deadline)
      slot.resume(with: .failure(timedOut))
    }
    // The timer must not outlive the wait: a sleeping task per signed
    // request would pile up until each deadline.
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        slot.install(continuation)
        Task { slot.resume(with: await task.result) }
      }
    } onCancel: {
      slot.resume(with: .failure(CancellationError()))
    }
  }

  /// The one continuation of a wait, resumed exactly once by whichever
  /// comes first: the value or the cancellation. Why a lock: the two race on
  /// different threads, and a continuation resumed twice is a crash.
  private final class Slot<Value: Sendable>: Sendable {
    private enum State: Sendable {
      case empty
      case waiting(CheckedContinuation<Value, any Error>)
      /// Ended before the continuation was installed (cancelled early).
      case ended(Result<Value, any Error>)
      case resumed
    }

    private let state = Locked<State>(.empty)

    func install(_ continuation: CheckedContinuation<Value, any Error>) {
      let early = state.withLock { state -> Result<Value, any Error>? in
        if case .ended(let result) = state {
          state = .resumed
          return result
        }
        state = .waiting(continuation)
        return nil
      }
      if let early { continuation.resume(with: early) }
    }

    func resume(with result: Result<Value, any Error>) {
      let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
        switch state {
        case .empty:
          state = .ended(result)
          return nil
        case .waiting(let continuation):
          state = .resumed
          return continuation
        case .ended, .resumed:
          return nil
        }
      }
      continuation?.resume(with: result)
    }
  }
}
