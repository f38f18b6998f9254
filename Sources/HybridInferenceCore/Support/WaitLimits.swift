/// The range every duration is clamped into before the library does
/// arithmetic with it: a wait, a deadline, a backoff, a remembered delay.
///
/// Why: `Duration` holds far more than a clock can take. `Task.sleep` traps
/// once its deadline passes `Int64.max` seconds, `ContinuousClock.now +
/// duration` and `duration * n` trap past 128 bits of attoseconds, and a
/// millisecond count traps past `Int` or `Int32`. A duration the app gives
/// (`RequestOptions.timeout`, `RetryPolicy.baseDelay`, `HybridModel.hedgeAfter`,
/// `CloudAPIError.retryDelay`) or a server gives (`RetryInfo.retryDelay`,
/// `Retry-After`, `expires_in`) may be anything, so each is clamped here, at
/// the point where it meets a clock, and never trusted to be small.
///
/// Negative is zero (a wait already over, a deadline already passed), which
/// is what the options already promised (`hedgeAfter` of zero or less asks
/// both models at once; `RetryPolicy` waits no less than nothing). Beyond
/// `longestWait` is `longestWait`: a wait that long is, for a request, one
/// that never ends, and it keeps every sum and product below a year of
/// nanoseconds, far inside `Int64`, `DispatchTime` and `Task.sleep`.
package enum WaitLimits {
  /// The longest wait, limit or delay the library acts on: 365 days.
  package static let longestWait: Duration = .seconds(365 * 24 * 3600)

  /// `duration` clamped into `0...longestWait`.
  package static func clamped(_ duration: Duration) -> Duration {
    min(max(duration, .zero), longestWait)
  }

  /// A server's number of seconds as a wait: nil when it is not a number
  /// (NaN) or is below zero (no wait asked), `longestWait` when it is larger
  /// (infinity included), else rounded up to the millisecond so that a wait
  /// is never shorter than asked.
  package static func seconds(_ seconds: Double) -> Duration? {
    guard !seconds.isNaN, seconds >= 0 else { return nil }
    let longest = longestWait / .seconds(1)
    guard seconds < longest else { return longestWait }
    return .milliseconds(Int64((seconds * 1000).rounded(.up)))
  }
}

extension ContinuousClock.Instant {
  /// This instant moved on by `duration` clamped into
  /// `0...WaitLimits.longestWait`: a deadline or wake-up time that every
  /// clock and sleep can take, however large or negative `duration` is.
  package func advanced(byWait duration: Duration) -> ContinuousClock.Instant {
    advanced(by: WaitLimits.clamped(duration))
  }
}
