import HybridInferenceCore

/// Google's error body, `{"error": {code, message, status, details}}`
/// (`google.rpc.Status` in its JSON form).
///
/// `details` is a list of typed messages told apart by `@type`; the client
/// reads three of them: `RetryInfo` (how long to wait), `ErrorInfo` (a
/// machine-readable reason such as `API_KEY_INVALID`) and `QuotaFailure`
/// (which quota ran out: per minute or per day).
struct ErrorEnvelope: Sendable, Hashable, Decodable {
  var error: Status

  struct Status: Sendable, Hashable, Decodable {
    var code: Int?
    var message: String?
    var status: String?
    var details: [JSONValue]?
  }

  /// The typed error this body describes, for a response with `httpStatus`.
  ///
  /// The HTTP status wins over `error.code` when they differ: it is what the
  /// client's retry rules and the app see on the wire.
  func cloudAPIError(httpStatus: Int) -> CloudAPIError {
    var retryDelay: Duration?
    var reason: String?
    var quotaIds: [String] = []
    for detail in error.details ?? [] {
      let type = detail["@type"]?.stringValue ?? ""
      if type.hasSuffix("google.rpc.RetryInfo") {
        retryDelay = detail["retryDelay"]?.stringValue.flatMap(Self.parseDuration)
      } else if type.hasSuffix("google.rpc.ErrorInfo") {
        reason = reason ?? detail["reason"]?.stringValue
      } else if type.hasSuffix("google.rpc.QuotaFailure") {
        if case .array(let violations)? = detail["violations"] {
          quotaIds += violations.compactMap { $0["quotaId"]?.stringValue }
        }
      }
    }
    return CloudAPIError(
      httpStatus: httpStatus, status: error.status, message: error.message ?? "",
      retryDelay: retryDelay, reason: reason, quotaIds: quotaIds)
  }

  /// Parses a `google.protobuf.Duration` in its JSON form: decimal seconds
  /// followed by `s` (`"47s"`, `"0.5s"`, `"1.000340012s"`), rounded up to
  /// the millisecond. A delay past `WaitLimits.longestWait` is that long (the
  /// server asked for more than any request waits); a negative one or one
  /// that is not a number is none.
  static func parseDuration(_ text: String) -> Duration? {
    guard text.hasSuffix("s"), let seconds = Double(text.dropLast()) else { return nil }
    return WaitLimits.seconds(seconds)
  }
}
