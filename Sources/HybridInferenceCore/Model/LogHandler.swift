import Foundation

/// Where the library reports what it does: every fallback with its reason, and
/// llama.cpp's own log lines.
///
/// A value holding a closure, so an app can forward to its own logging system
/// without the library depending on a package.
public struct LogHandler: Sendable {
  private let handle: @Sendable (LogRecord) -> Void

  /// A handler that passes every record to `handle`.
  public init(_ handle: @escaping @Sendable (LogRecord) -> Void) {
    self.handle = handle
  }

  /// Passes `record` on.
  public func log(_ record: LogRecord) { handle(record) }

  /// Writes one line per record at `.warning` or above to standard error
  /// (fallbacks are warnings; llama.cpp's chatter is not).
  public static let standardError = LogHandler { record in
    guard record.level >= .warning else { return }
    FileHandle.standardError.write(Data("hybrid-inference: \(record.message)\n".utf8))
  }

  /// Drops everything.
  public static let silent = LogHandler { _ in }
}

/// One thing the library reports.
public struct LogRecord: Sendable {
  /// How much the record matters.
  public var level: LogLevel
  /// Which part of the library speaks.
  public var category: Category
  /// One line of text, never containing an API key.
  public var message: String
  /// Set when the record reports a fallback.
  public var fallback: FallbackEvent?

  /// A record; `fallback` is set only for fallbacks.
  public init(level: LogLevel, category: Category, message: String, fallback: FallbackEvent? = nil) {
    self.level = level
    self.category = category
    self.message = message
    self.fallback = fallback
  }

  /// The part of the library a record comes from.
  public enum Category: String, Sendable, Hashable {
    /// Hybrid routing: fallbacks.
    case routing
    /// The cloud client: retries, errors.
    case cloud
    /// The on-device model.
    case local
    /// llama.cpp's own log lines.
    case llama
  }
}

/// How much a record matters.
public enum LogLevel: Int, Sendable, Hashable, Comparable {
  /// Detail for debugging.
  case debug
  /// Normal operation (a retry, a model load).
  case info
  /// Something went around a problem (a fallback).
  case warning
  /// Something failed.
  case error

  /// Orders levels from `.debug` to `.error`.
  public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A hybrid moved a request from one model to the other.
public struct FallbackEvent: Sendable, CustomStringConvertible {
  /// The model that did not answer.
  public var from: String
  /// The model that was asked instead.
  public var to: String
  /// Why the first model did not answer.
  public var reason: Reason

  /// An event for a fallback from `from` to `to`.
  public init(from: String, to: String, reason: Reason) {
    self.from = from
    self.to = to
    self.reason = reason
  }

  /// Why the first model did not answer.
  ///
  /// New routing features add reasons, so the enum is `@nonexhaustive`
  /// (SE-0487) where the compiler knows the attribute: an app's `switch`
  /// over it ends with `@unknown default` (or `default`).
  #if hasAttribute(nonexhaustive)
    @nonexhaustive
  #endif
  public enum Reason: Sendable, CustomStringConvertible {
    /// It was unavailable before the request.
    case unavailable(UnavailableReason)
    /// It failed with this error.
    case failed(any Error)
    /// It was not asked: it is known to fail with this error right now (its
    /// `rememberedFailure`, such as a cloud remembered as offline).
    case remembered(any Error)
    /// Its answer broke off with this error after text was delivered; the
    /// other model continues it (`HybridModel.continuesInterruptedAnswers`).
    case interrupted(any Error)
    /// It had delivered nothing within this delay (`HybridModel.hedgeAfter`);
    /// the other model, asked too, delivered first and it was cancelled.
    case hedged(after: Duration)

    /// The reason as one line of text; a remembered offline verdict reads
    /// "offline (remembered)".
    public var description: String {
      switch self {
      case .unavailable(let reason): "unavailable: \(reason)"
      case .failed(let error): "failed: \(HybridInferenceError.describe(error))"
      case .remembered(let error):
        if case .offline? = error as? HybridInferenceError {
          "offline (remembered)"
        } else {
          "\(HybridInferenceError.describe(error)) (remembered)"
        }
      case .interrupted(let error):
        "interrupted after text (\(HybridInferenceError.describe(error))); continuing the answer"
      case .hedged(let delay): "delivered nothing within \(delay); the hedge answered first"
      }
    }
  }

  /// The event as one line of text.
  public var description: String { "falling back from \(from) to \(to): \(reason)" }
}
