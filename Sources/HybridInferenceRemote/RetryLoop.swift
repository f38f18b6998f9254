import HybridInferenceCore

/// Runs one call's attempts under a `RetryPolicy`.
///
/// Each failed attempt is classified: retryable errors wait (backoff with
/// full jitter, at least the server's `RetryInfo.retryDelay`) and go again,
/// as long as attempts remain and the wait ends before the call's deadline;
/// everything else, and the last failure, is thrown as it is. Every retry is
/// logged, with the error's description (which never holds the key).
package struct RetryLoop: Sendable {
  let policy: RetryPolicy
  package let deadline: ContinuousClock.Instant
  let modelName: String
  let log: LogHandler
  /// Whether the call may be sent again once it could have reached the
  /// server: true for the ones that cost nothing and change nothing
  /// (`:countTokens`, `GET /models`), false for a generation, which the
  /// server may have run (and billed) before the connection went.
  let isIdempotent: Bool

  /// Whether and how soon a failed attempt may be tried again.
  enum Decision: Equatable {
    case never
    /// Retry, waiting at least the server's delay when it gave one.
    case retry(serverMinimum: Duration?)
  }

  /// The HTTP statuses that mean "try again later".
  static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

  package func run<Value>(_ attempt: (_ number: Int) async throws -> Value) async throws -> Value {
    var number = 1
    while true {
      do {
        return try await attempt(number)
      } catch let failure as DeliveredStreamFailure {
        throw failure.error
      } catch {
        guard number < policy.maxAttempts,
          case .retry(let minimum) = Self.decision(for: error, isIdempotent: isIdempotent)
        else { throw error }
        let wait = policy.delay(
          beforeRetry: number, fraction: Double.random(in: 0...1), serverMinimum: minimum)
        guard ContinuousClock.now.advanced(byWait: wait) < deadline else { throw error }
        log.log(
          LogRecord(
            level: .info, category: .cloud,
            message: "\(modelName): attempt \(number) of \(policy.maxAttempts) failed "
              + "(\(HybridInferenceError.describe(error))); retrying in \(Self.format(wait))"))
        try await Task.sleep(for: wait)
        number += 1
      }
    }
  }

  /// Retryable: 408, 429 (unless the quota is per day), 500, 502, 503, 504
  /// (the server answered, and did not run the request), and a connection
  /// reset or closed before any of the request's body went out (`.offline`
  /// with `networkConnectionLost` or `badServerResponse`: nothing the server
  /// could act on reached it).
  ///
  /// A connection lost once the body was on its way (`.connectionLost`) is
  /// retried only for an idempotent call: the server may have read the whole
  /// request and run it, so a generation sent again could be run, and
  /// billed, twice. An unreachable host is not retried either: a prefer-cloud
  /// hybrid should fall back at once rather than wait. Nor is a timeout (the
  /// call's time is spent) or a truncated answer (`.responseTruncated`: the
  /// server ran the request).
  static func decision(for error: any Error, isIdempotent: Bool) -> Decision {
    guard let error = error as? HybridInferenceError else { return .never }
    switch error {
    case .cloudAPI(let apiError):
      guard retryableStatuses.contains(apiError.httpStatus) else { return .never }
      if apiError.httpStatus == 429, apiError.quotaIds.contains(where: { $0.contains("PerDay") }) {
        return .never
      }
      return .retry(serverMinimum: apiError.retryDelay)
    case .offline(let urlError):
      return urlError.code == .networkConnectionLost || urlError.code == .badServerResponse
        ? .retry(serverMinimum: nil) : .never
    case .connectionLost:
      return isIdempotent ? .retry(serverMinimum: nil) : .never
    default:
      return .never
    }
  }

  static func format(_ duration: Duration) -> String {
    let seconds = duration / .seconds(1)
    return seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : "\((seconds * 100).rounded() / 100) s"
  }
}

/// A stream failure after content reached the caller: never retried, since
/// the caller would see the answer twice.
struct DeliveredStreamFailure: Error {
  let error: any Error
}
