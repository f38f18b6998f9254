import HybridInferenceCore

/// How the cloud model retries transient failures.
///
/// Retried: HTTP 408, 429, 500, 502, 503 and 504 (the server answered and
/// did not run the request), and a connection reset or closed before any of
/// the request's body went out (nothing reached the server). A connection
/// lost after that (`HybridInferenceError.connectionLost`) is retried only
/// for `countTokens` and OpenAI's `GET /models`, which run nothing: the server may have read the whole
/// request and started generating, so a generation, unary or streamed, is
/// never sent twice and cannot be billed twice. Never retried: any other
/// status, a 429 whose quota is per day (waiting minutes will not help), a
/// stream that has already delivered content, an answer cut short
/// (`.responseTruncated`), a timeout, an unreachable host (the prefer-cloud
/// hybrid should fall back at once instead).
///
/// Waits grow exponentially with full jitter (a random wait between zero and
/// `baseDelay * 2^(retry - 1)`, capped at `maxDelay`), which spreads out
/// clients that failed together; a wait is never shorter than the server's
/// `RetryInfo.retryDelay`, and no retry starts that could not finish before
/// `RequestOptions.timeout`. Every delay, the policy's and the server's, is
/// clamped into 0...365 days before it is used: a longer one is 365 days
/// (so no retry, within any timeout), a negative one zero.
public struct RetryPolicy: Sendable, Hashable {
  /// Attempts in all, the first included; 1 means no retry.
  public var maxAttempts: Int
  /// The cap of the first retry's random wait; doubles with each retry.
  public var baseDelay: Duration
  /// The largest cap any retry's random wait can have.
  public var maxDelay: Duration

  /// A policy with the given limits.
  public init(maxAttempts: Int = 3, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(30)) {
    self.maxAttempts = maxAttempts
    self.baseDelay = baseDelay
    self.maxDelay = maxDelay
  }

  /// Three attempts, 1 s base, 30 s cap.
  public static let `default` = RetryPolicy()

  /// One attempt: every failure is reported at once.
  public static let none = RetryPolicy(maxAttempts: 1)

  /// The wait before retry number `retry` (1 for the first retry), given a
  /// uniform random `fraction` in 0...1 and the server's minimum.
  func delay(beforeRetry retry: Int, fraction: Double, serverMinimum: Duration?) -> Duration {
    // Every duration is clamped first (`WaitLimits`): a year doubled 30
    // times still fits `Duration`, where `.seconds(Int64.max)` doubled does not.
    let exponent = min(max(retry - 1, 0), 30)
    let cap = min(WaitLimits.clamped(baseDelay) * (1 << exponent), WaitLimits.clamped(maxDelay))
    // `Duration * Double` rounds through a `Double`, so it may pass `cap`.
    let jittered = min(cap * min(max(fraction, 0), 1), cap)
    return max(jittered, WaitLimits.clamped(serverMinimum ?? .zero))
  }
}
