import HybridInferenceCore

/// Stops a response that has sent nothing for `limit`: the transport's
/// deadline covers a whole exchange, which for a download of gigabytes
/// cannot be short, so a server that stalls without closing is caught here.
final class StallWatch: Sendable {
  /// When the last bytes came, and whether the watch stopped the response.
  /// Locked: the body loop writes it, the watch's task reads it.
  private let state: Locked<(last: ContinuousClock.Instant, stalled: Bool)>
  private let task: Task<Void, Never>

  init(limit: Duration, stop: @escaping @Sendable () -> Void) {
    let state = Locked((last: ContinuousClock.now, stalled: false))
    self.state = state
    task = Task {
      while (try? await Task.sleep(for: min(limit, .seconds(1)))) != nil {
        let stalled = state.withLock { state in
          if ContinuousClock.now - state.last > limit { state.stalled = true }
          return state.stalled
        }
        if stalled {
          stop()
          return
        }
      }
    }
  }

  /// Bytes arrived.
  func saw() { state.withLock { $0.last = ContinuousClock.now } }

  /// Whether the watch stopped the response.
  var stalled: Bool { state.withLock { $0.stalled } }

  /// Ends the watch (the body ended).
  func end() { task.cancel() }
}
