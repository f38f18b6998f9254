/// An error status from the cloud API, from its `{"error": {...}}` body.
public struct CloudAPIError: Sendable, Hashable, CustomStringConvertible {
  /// The HTTP status code.
  public var httpStatus: Int
  /// Google's status name (`"INVALID_ARGUMENT"`, `"RESOURCE_EXHAUSTED"`); nil
  /// when the body was not Google's JSON (an HTML proxy page).
  public var status: String?
  /// The server's message: at most 4 KiB, with its control characters
  /// escaped, when the library read it from a response.
  public var message: String
  /// How long the server asked to wait before retrying (`RetryInfo.retryDelay`,
  /// or `Retry-After` from an OpenAI-compatible server): at most 365 days
  /// when the library read it (a longer request is 365 days), nil when the
  /// server asked for none or for a negative wait. Any value is clamped into
  /// 0...365 days before the library waits on it.
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
  ///
  /// The server's texts in it are cut (the message to 4 KiB) and their
  /// control characters escaped (`\n`, `\u{1B}`), so the line is safe to log
  /// or print to a terminal whatever the server wrote. An error the library
  /// made is already so; one an app builds is made so here.
  public var description: String {
    var text = "cloud API error \(httpStatus)"
    if let status { text += " \(ServerText.inert(status, limit: 256))" }
    if !message.isEmpty { text += ": \(ServerText.inert(message))" }
    if let retryDelay { text += " (retry after \(retryDelay))" }
    return text
  }
}
