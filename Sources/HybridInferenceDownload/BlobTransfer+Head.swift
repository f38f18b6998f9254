import HybridInferenceCore
import HybridInferenceRemote

/// What a transfer reads from the response head: the size, the range it
/// answers, the validator to resume with.
extension BlobTransfer {
  /// The size a 200 announces, checked against the one expected: a server
  /// whose `Content-Length` disagrees with the file's size is refused
  /// before a byte is written.
  func checkedLength(_ head: ResponseHead, url: String) throws(HybridInferenceError) -> Int64? {
    let length = try Self.contentLength(head, url: url)
    if let length, let size, length != size {
      throw .downloadFailed(
        url: url, status: head.statusCode, reason: "the server announced \(length) bytes; the file has \(size)")
    }
    return size ?? length
  }

  /// The file's size from a 206 that resumes at `start`: its
  /// `Content-Range` must be `bytes start-(total-1)/total`, with the total
  /// the expected size, and its `Content-Length` the rest.
  func checkedRange(_ head: ResponseHead, resumingAt start: Int64, url: String) throws(HybridInferenceError) -> Int64 {
    guard let range = head.value("Content-Range").flatMap(ContentRange.init), range.first == start,
      range.last == range.total - 1, size.map({ $0 == range.total }) ?? true
    else {
      throw .downloadFailed(
        url: url, status: 206,
        reason:
          "the server's Content-Range (\(head.value("Content-Range").map { ServerText.inert($0, limit: 80) } ?? "none")) "
          + "is not the bytes \(start)- asked for")
    }
    if let length = try Self.contentLength(head, url: url), length != range.total - start {
      throw .downloadFailed(
        url: url, status: 206, reason: "the server announced \(length) bytes for a range of \(range.total - start)")
    }
    return range.total
  }

  /// `Content-Length` as a number; absent is nil, malformed an error.
  static func contentLength(_ head: ResponseHead, url: String) throws(HybridInferenceError) -> Int64? {
    guard let text = head.value("Content-Length") else { return nil }
    guard let length = ContentRange.number(Substring(text.trimmingCharacters(in: .whitespaces))) else {
      throw .downloadFailed(url: url, status: head.statusCode, reason: "the Content-Length is not a size")
    }
    return length
  }

  /// What a later run sends as `If-Range`: a strong `ETag` (a weak one may
  /// not resume bytes, RFC 9110 §13.1.5), else `Last-Modified`; empty when
  /// neither is there, and the download cannot resume.
  static func validator(of head: ResponseHead) -> String {
    if let etag = head.value("ETag"), !etag.hasPrefix("W/"), etag.utf8.count <= 256 { return etag }
    if let modified = head.value("Last-Modified"), modified.utf8.count <= 64 { return modified }
    return ""
  }

  /// The words for a refusing status.
  static func reason(for status: Int) -> String {
    switch status {
    case 401: "the server wants a token (HF_TOKEN) or refused the one sent"
    case 403: "the server refused access (a gated repository whose terms are not accepted?)"
    case 404: "no such repository, revision or file"
    case 416: "the server refused the range asked for; the next download starts over"
    case 429: "the server is rate-limiting requests"
    default: "the server answered HTTP \(status)"
    }
  }
}

/// `Content-Range: bytes first-last/total` (RFC 9110 §14.4).
struct ContentRange: Equatable {
  let first: Int64
  let last: Int64
  let total: Int64

  init?(_ text: String) {
    let text = text.trimmingCharacters(in: .whitespaces)
    guard text.hasPrefix("bytes ") else { return nil }
    let parts = text.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, let total = Self.number(parts[1]) else { return nil }
    let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]), first <= last,
      last < total
    else { return nil }
    self.first = first
    self.last = last
    self.total = total
  }

  /// Decimal digits only (no sign, no space), as the grammar has them.
  static func number(_ text: Substring) -> Int64? {
    guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
      return nil
    }
    return Int64(text)
  }
}
