/// Whether a backend's work for one stream has ended, for the code that must
/// wait for it: a session keeps its one-request slot until the backend has
/// really stopped, not merely until its caller stopped listening.
///
/// `ResponseDeltaStream.producing` signals it when its `produce` closure has
/// returned (answered, failed or cancelled).
final class StreamWork: Sendable {
  private struct State {
    var ended = false
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  // Signalled by the producing task, awaited by consumers on other tasks.
  private let state = Locked(State())

  /// The work has ended: wakes every waiter, present and future.
  func signalEnded() {
    let waiters = state.withLock { state in
      state.ended = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Whether the work has ended.
  var hasEnded: Bool { state.withLock { $0.ended } }

  /// Returns once the work has ended. Deliberately not cancellable: whoever
  /// waits has cancelled the work already and needs to know it has stopped.
  func waitUntilEnded() async {
    if hasEnded { return }
    await withCheckedContinuation { continuation in
      let ended = state.withLock { state in
        if !state.ended { state.waiters.append(continuation) }
        return state.ended
      }
      if ended { continuation.resume() }
    }
  }
}
