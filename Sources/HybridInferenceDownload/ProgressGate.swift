import HybridInferenceCore

/// Turns a download's byte counts into the `DownloadProgress` updates an app
/// sees: at most one every `interval` (a chunk arrives every few
/// microseconds on a fast link; a progress bar redraws a few times a
/// second), never going down, and always the last one.
struct ProgressGate {
  static let interval: Duration = .milliseconds(100)

  private let report: @Sendable (DownloadProgress) -> Void
  private var shown: Int64 = -1
  private var lastTime: ContinuousClock.Instant?

  init(_ report: @escaping @Sendable (DownloadProgress) -> Void) {
    self.report = report
  }

  /// `completed` of `total` so far: reported when it moved past what was
  /// shown and the interval has passed, or when `final`.
  mutating func update(_ completed: Int64, of total: Int64?, final: Bool = false) {
    guard completed > shown || (final && completed >= shown) else { return }
    let now = ContinuousClock.now
    if !final, let lastTime, now - lastTime < Self.interval { return }
    shown = completed
    lastTime = now
    report(DownloadProgress(completedBytes: completed, totalBytes: total))
  }
}
