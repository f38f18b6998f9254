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

  /// What a request whose render thread the OS refused fails with.
  static let refused = "the OS refused a thread for the chat template's render (a thread or memory limit)"

  /// `body`'s result; `CancellationError` when the task was cancelled
  /// meanwhile; `HybridInferenceError.generationFailed` when the OS refuses
  /// the thread (`OSThread`: Foundation's `Thread` would never run the body,
  /// and the request would wait for ever).
  static func run<Value: Sendable>(
    stackSize: Int = TemplateThread.stackSize, _ body: @escaping @Sendable (JinjaCancellation) throws -> Value
  ) async throws -> Value {
    let cancellation = JinjaCancellation()
    let value = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, Error>) in
        // The name fits Linux's 15 bytes whole (tests wait on it in /proc).
        let started = OSThread.start(stackSize: stackSize, name: TemplateThread.name) {
          continuation.resume(with: Result { try body(cancellation) })
        }
        if !started {
          continuation.resume(throwing: HybridInferenceError.generationFailed(refused))
        }
      }
    } onCancel: {
      cancellation.cancel()
    }
    try Task.checkCancellation()
    return value
  }
}
