import Foundation

/// Why a response could not be read: every malformed byte sequence ends in
/// one of these (the transport reports it as `URLError(.badServerResponse)`),
/// never in a trap.
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
