/// An error status from the cloud API, from its `{"error": {...}}` body.
public struct CloudAPIError: Sendable, Hashable, CustomStringConvertible {
  /// The HTTP status code.
  public var httpStatus: Int
  /// Google's status name (`"INVALID_ARGUMENT"`, `"RESOURCE_EXHAUSTED"`); nil
  /// when the body was not Google's JSON (an HTML proxy page).
  public var status: String?
  /// The server's message.
  public var message: String
  /// How long the server asked to wait before retrying (`RetryInfo.retryDelay`).
  public var retryDelay: Duration?
  /// `ErrorInfo.reason` when present (`"API_KEY_INVALID"`).
  public var reason: String?
  /// The quota that was exceeded, for 429s (`QuotaFailure` violation ids).
  public var quotaIds: [String]

  /// An API error with what the server said.
  public init(
    httpStatus: Int, status: String? = nil, message: String, retryDelay: Duration? = nil,
    reason: String? = nil, quotaIds: [String] = []
  ) {
    self.httpStatus = httpStatus
    self.status = status
    self.message = message
    self.retryDelay = retryDelay
    self.reason = reason
    self.quotaIds = quotaIds
  }

  /// The error as one line: status, Google status, message and retry delay.
  public var description: String {
    var text = "cloud API error \(httpStatus)"
    if let status { text += " \(status)" }
    if !message.isEmpty { text += ": \(message)" }
    if let retryDelay { text += " (retry after \(retryDelay))" }
    return text
  }
}
