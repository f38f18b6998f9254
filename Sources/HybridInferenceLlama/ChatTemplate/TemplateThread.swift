import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Runs a request's template work (the renders of its prompt) on a thread of
/// its own, off Swift's cooperative pool.
///
/// A render is synchronous and, for a hostile template, lasts until its
/// budget is spent; on a cooperative thread it would hold one of the few
/// threads every task of the app shares. A thread per request costs tens of
/// microseconds, next to a prompt's milliseconds of prefill, and gives the
/// engine a stack of known size (`stackSize`), which its depth limits are
/// sized for. Cancelling the waiting task sets the render's
/// `JinjaCancellation`, which the engine reads every 1,024 steps, so the
/// thread stops too, not only the wait: `run` returns only once `body` has.
enum TemplateThread {
  /// The threads' name.
  static let name = "hi.template"

  /// Room for `JinjaBudget.Limits.depth` levels of a debug build's frames, with margin.
  static let stackSize = 16 << 20

  /// `body`'s result; `CancellationError` when the task was cancelled meanwhile.
  static func run<Value: Sendable>(_ body: @escaping @Sendable (JinjaCancellation) throws -> Value) async throws
    -> Value
  {
    let cancellation = JinjaCancellation()
    let value = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, Error>) in
        let thread = Thread {
          // Named by the thread itself, through /proc: Foundation on Linux
          // hands `Thread.name` to the OS only once it knows the thread's
          // handle, which races with the start, and Glibc's
          // pthread_setname_np is not imported. Linux keeps 15 bytes; this
          // name shows whole in top, gdb and /proc (tests wait on it there).
          try? TemplateThread.name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
          continuation.resume(with: Result { try body(cancellation) })
        }
        thread.stackSize = stackSize
        thread.start()
      }
    } onCancel: {
      cancellation.cancel()
    }
    try Task.checkCancellation()
    return value
  }
}
