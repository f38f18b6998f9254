import Foundation

/// Why a response could not be read: every malformed byte sequence ends in
/// one of these, never in a trap. The transport reports a malformed one as
/// `TransportFailure.malformedResponse` (the server answered, wrongly: not a
/// lost connection, never offline) and the two that are the connection
/// ending, `closedBeforeResponse` and `truncated`, in URLSession's codes.
enum HTTP1ParseError: Error, Equatable, Sendable {
  /// The head (status line and headers) passed `HTTP1Limits.maximumHeadBytes`.
  case headTooLarge
  /// More than `HTTP1Limits.maximumHeaderFields` header fields.
  case tooManyHeaderFields
  /// One line of the head or of a chunk's framing passed its limit.
  case lineTooLong
  /// The status line is not `HTTP/1.x NNN reason`.
  case malformedStatusLine
  /// A header line is not `name: value` with a token name and clean value
  /// (obsolete line folding included).
  case malformedHeader
  /// `Content-Length` is not a number, overflows, or has conflicting values.
  case invalidContentLength
  /// A `Transfer-Encoding` other than `chunked`, which was never asked for.
  case unsupportedTransferEncoding
  /// Both `Transfer-Encoding` and `Content-Length`: which one frames the
  /// body is the classic smuggling ambiguity (RFC 9112 §6.3 says to treat
  /// it as an error), so neither is trusted.
  case conflictingFraming
  /// A chunk size line that is not hex, or overflows.
  case invalidChunkSize
  /// A chunk's data not followed by CRLF.
  case malformedChunk
  /// A `101 Switching Protocols` nobody asked for.
  case unexpectedUpgrade
  /// The connection ended before any byte of a response.
  case closedBeforeResponse
  /// The connection ended inside the head or before the body's framed end.
  case truncated
}

extension HTTP1ParseError {
  /// A few words on what was wrong, for `HybridInferenceError.malformedResponse`.
  var reason: String {
    switch self {
    case .headTooLarge: "the response head is over \(HTTP1Limits.maximumHeadBytes) bytes"
    case .tooManyHeaderFields: "more than \(HTTP1Limits.maximumHeaderFields) header fields"
    case .lineTooLong: "a head or chunk line is over its limit"
    case .malformedStatusLine: "the status line is not HTTP/1.x"
    case .malformedHeader: "a header line is malformed"
    case .invalidContentLength: "Content-Length is not one number"
    case .unsupportedTransferEncoding: "a Transfer-Encoding other than chunked"
    case .conflictingFraming: "both Transfer-Encoding and Content-Length"
    case .invalidChunkSize: "a chunk size is not a hexadecimal number that fits"
    case .malformedChunk: "a chunk's data is not followed by CRLF"
    case .unexpectedUpgrade: "an unrequested 101 Switching Protocols"
    case .closedBeforeResponse: "the connection closed before any response"
    case .truncated: "the connection closed inside the response"
    }
  }
}

/// The limits that keep a hostile response's memory bounded.
enum HTTP1Limits {
  /// The most bytes of one head (status line, headers, final blank line);
  /// also the most bytes of a chunked body's trailers.
  static let maximumHeadBytes = 64 << 10
  /// The most header fields of one head (and trailer fields of one body).
  static let maximumHeaderFields = 128
  /// The longest single head line.
  static let maximumLineBytes = 16 << 10
  /// The longest chunk size line (size and extensions).
  static let maximumChunkLineBytes = 4 << 10
}
