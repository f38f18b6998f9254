import Foundation
import HybridInferenceCore
import Synchronization

/// A request on its way to a `BatchedContext`: announced before its prompt is
/// rendered, settled when `submit` queues it, withdrawn when it fails first.
///
/// Why: sessions that ask at once reach the queue milliseconds apart, each
/// after rendering its template on a thread of its own. A scheduler that
/// starts on the first one would prefill it alone (or three of four) and the
/// rest a step later, and the last one would then decode its final token
/// alone, a step llama-server does not pay: sent token ids that arrive
/// together, it prefills them in one step. So a scheduler starting a burst waits for the announced turns, at
/// most `BatchedContext.arrivalWait` (a template that renders for long does
/// not hold the others back for longer), and prefills them together.
///
/// `Sendable` without a lock of its own: `pending` is atomic, and the count
/// it settles is behind the context's `state` lock.
final class TurnAnnouncement: Sendable {
  private let pending = Atomic<Bool>(true)
  private let state: Locked<BatchedContext.State>

  init(_ state: Locked<BatchedContext.State>) {
    self.state = state
    state.withLock { $0.announced += 1 }
  }

  /// The turn is queued: called by `submit` under the state's lock.
  func settle(_ state: inout BatchedContext.State) {
    if pending.exchange(false, ordering: .relaxed) { state.announced -= 1 }
  }

  /// The turn will not come (its render failed, its task was cancelled);
  /// nothing once it was settled.
  func withdraw() {
    guard pending.exchange(false, ordering: .relaxed) else { return }
    state.withLock { $0.announced -= 1 }
  }
}

extension BatchedContext {
  /// Announces a turn whose prompt is being rendered (`TurnAnnouncement`).
  func announce() -> TurnAnnouncement { TurnAnnouncement(state) }

  /// The longest a scheduler starting a burst waits for announced turns: a
  /// few renders of an ordinary template (milliseconds each).
  static var defaultArrivalWait: Duration { .milliseconds(20) }

  /// Before the first step of a burst (nothing admitted yet, something
  /// queued): waits while turns are announced, until `arrivalWait` passes.
  /// Sleeps between looks, so the renders it waits for have the cores.
  func awaitAnnouncedTurns() {
    let deadline = ContinuousClock.now + arrivalWait
    while state.withLock({ $0.announced > 0 && !$0.queue.isEmpty }), ContinuousClock.now < deadline {
      usleep(200)
    }
  }
}
