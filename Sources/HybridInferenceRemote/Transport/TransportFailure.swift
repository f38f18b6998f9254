import HybridInferenceCore

/// Failures the transport itself decides, as opposed to the `URLError`s
/// that URLSession reports. Each backend maps them to its typed errors.
enum TransportFailure: Error, Sendable, Equatable {
  /// The connection was made and the request sent, but the exchange ran past
  /// its deadline: the server is reachable and slow, not offline.
  case deadlineExceeded
  /// The server redirected to another origin, which the redirect policy
  /// refuses; nothing was sent there.
  case redirectRefused(from: Origin, to: Origin)
  /// A request header's name is not an HTTP token, or its value holds CR,
  /// LF or NUL: sent, it would write headers (or requests) of its own.
  /// Nothing was sent. Only the name is kept: the value may be a key.
  case invalidRequestHeader(name: String)
  /// The server answered with bytes that are not an HTTP/1.1 response (a
  /// status line, a header, a chunk size or a `Content-Length` that cannot
  /// be read; `reason` says which, in a few words). The server was reached
  /// and answered, so this is neither offline nor a lost connection.
  case malformedResponse(reason: String)
}
