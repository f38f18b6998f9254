/// Keeps the rounds of one tool-calling request on one model.
///
/// A tool may have side effects, so once one has run the request must not be
/// repeated on another model: each `HybridModel` on the way records which side
/// answered a round (keyed by its depth in the nesting), and after `pin()`
/// the next rounds go to that side only, and a failure there is thrown
/// rather than answered by the other side.
final class ToolRoute: Sendable {
  /// The side a hybrid at some depth asked.
  enum Side: Sendable {
    case primary
    case secondary
  }

  private struct State {
    var sides: [Int: Side] = [:]
    var pinned = false
  }

  // Shared by the rounds of one request (and so by the tasks that run them).
  private let state = Locked(State())

  /// The side a hybrid at `depth` must ask, once a tool has run; nil while it may route freely.
  func pinnedSide(at depth: Int) -> Side? {
    state.withLock { $0.pinned ? $0.sides[depth] : nil }
  }

  /// Records the side that answered at `depth` (ignored once pinned).
  func record(_ side: Side, at depth: Int) {
    state.withLock { state in
      if !state.pinned { state.sides[depth] = side }
    }
  }

  /// A tool has run: from now on the recorded sides are the only ones asked.
  func pin() {
    state.withLock { $0.pinned = true }
  }

  /// Whether a tool has run in this request.
  var isPinned: Bool { state.withLock { $0.pinned } }
}
