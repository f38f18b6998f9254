/// A parsed response head.
struct HTTP1ResponseHead: Sendable, Equatable {
  var statusCode: Int
  /// HTTP/1.0 (false) or HTTP/1.1 (true).
  var isHTTP11: Bool
  /// The fields in order, names as sent.
  var fields: [(name: String, value: String)]

  static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.statusCode == rhs.statusCode && lhs.isHTTP11 == rhs.isHTTP11
      && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
  }

  /// The first value of the field named `name` (any case).
  func value(_ name: String) -> String? {
    fields.first { Self.sameToken($0.name, name) }?.value
  }

  /// The fields by lowercased name, first value of a repeated one (what
  /// `ResponseHead.fields` carries).
  var fieldsByName: [String: String] {
    var byName: [String: String] = [:]
    for field in fields where byName[field.name.lowercased()] == nil {
      byName[field.name.lowercased()] = field.value
    }
    return byName
  }

  /// Every value of `name`, comma-separated lists split and trimmed of
  /// optional whitespace.
  func listValues(_ name: String) -> [String] {
    fields.filter { Self.sameToken($0.name, name) }.flatMap { field in
      field.value.utf8.split(separator: UInt8(ascii: ",")).compactMap { element in
        let trimmed = Self.trimmingOptionalWhitespace(element)
        return trimmed.isEmpty ? nil : String(decoding: trimmed, as: UTF8.self)
      }
    }
  }

  /// Whether the server lets the connection carry another request.
  var allowsReuse: Bool {
    let tokens = listValues("Connection")
    if tokens.contains(where: { Self.sameToken($0, "close") }) { return false }
    return isHTTP11 || tokens.contains { Self.sameToken($0, "keep-alive") }
  }

  /// `Keep-Alive: timeout=N`: how long the server keeps an idle connection.
  var keepAliveTimeout: Duration? {
    for parameter in listValues("Keep-Alive") {
      let parts = parameter.utf8.split(separator: UInt8(ascii: "="), maxSplits: 1).map(Self.trimmingOptionalWhitespace)
      if parts.count == 2, Self.sameToken(String(decoding: parts[0], as: UTF8.self), "timeout"),
        let seconds = Self.decimal(String(decoding: parts[1], as: UTF8.self))
      {
        return .seconds(min(seconds, 3600))
      }
    }
    return nil
  }

  /// Whether two tokens (field names, `close`, `chunked`) are the same in
  /// any ASCII case. Why not `caseInsensitiveCompare`: tokens are ASCII
  /// (RFC 9110 §5.6.2), and Foundation's comparison folds Unicode through a
  /// locale, a dozen times dearer for every field of every response.
  static func sameToken(_ a: String, _ b: String) -> Bool {
    func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
    return a.utf8.elementsEqual(b.utf8) { lower($0) == lower($1) }
  }

  /// `bytes` without the optional whitespace around it: spaces and tabs only
  /// (RFC 9110 §5.6.3). Foundation's `.whitespaces` also takes Unicode
  /// spaces, which read `Content-Length: <no-break space>5` as 5, where a
  /// strict reader on the path refuses it: framing two readers disagree on
  /// is how a response stream is desynchronised.
  static func trimmingOptionalWhitespace<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes
  where Bytes.SubSequence == Bytes {
    var trimmed = bytes
    while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
    while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
    return trimmed
  }

  /// The `Content-Length`, nil when absent; every value (repeated fields or
  /// a list) must be the same decimal number.
  func contentLength() throws(HTTP1ParseError) -> Int? {
    var length: Int?
    for text in listValues("Content-Length") {
      guard let value = Self.decimal(text) else { throw .invalidContentLength }
      if let length, length != value { throw .invalidContentLength }
      length = value
    }
    if length == nil, fields.contains(where: { Self.sameToken($0.name, "Content-Length") }) {
      throw .invalidContentLength
    }
    return length
  }

  /// Whether the body is chunked; throws for any other coding (none was
  /// asked for, so the bytes could not be read as sent).
  func isChunked() throws(HTTP1ParseError) -> Bool {
    let codings = listValues("Transfer-Encoding")
    if codings.isEmpty { return false }
    guard codings.count == 1, Self.sameToken(codings[0], "chunked") else { throw .unsupportedTransferEncoding }
    return true
  }

  /// A non-negative decimal without sign, overflow-checked.
  private static func decimal(_ text: String) -> Int? {
    guard !text.isEmpty else { return nil }
    var value = 0
    for byte in text.utf8 {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      guard !overflow1, !overflow2 else { return nil }
      value = sum
    }
    return value
  }

  /// Parses the status line.
  static func statusLine(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> (code: Int, isHTTP11: Bool) {
    let bytes = Array(line)
    // "HTTP/1.x NNN" at least, then optionally " reason".
    guard bytes.count >= 12, bytes.starts(with: Array("HTTP/1.".utf8)), bytes[8] == 0x20 else {
      throw .malformedStatusLine
    }
    let isHTTP11: Bool
    switch bytes[7] {
    case UInt8(ascii: "1"): isHTTP11 = true
    case UInt8(ascii: "0"): isHTTP11 = false
    default: throw .malformedStatusLine
    }
    var code = 0
    for byte in bytes[9..<12] {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw .malformedStatusLine }
      code = code * 10 + Int(byte - UInt8(ascii: "0"))
    }
    guard code >= 100, bytes.count == 12 || bytes[12] == 0x20 else { throw .malformedStatusLine }
    guard !bytes[12...].contains(where: { $0 == 0 || $0 == 0x0D }) else { throw .malformedStatusLine }
    return (code, isHTTP11)
  }

  /// Parses one `name: value` line (no line ending).
  static func field(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> (name: String, value: String) {
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { throw .malformedHeader }
    let name = line[line.startIndex..<colon]
    guard name.allSatisfy(HTTP1RequestWriter.isTokenByte) else { throw .malformedHeader }
    let untrimmed = line[(colon + 1)...]
    guard !untrimmed.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) else { throw .malformedHeader }
    let value = trimmingOptionalWhitespace(untrimmed)
    // Names are ASCII tokens; a value that is not UTF-8 is kept as Latin-1.
    let text = String(validating: value, as: UTF8.self) ?? String(value.map { Character(Unicode.Scalar($0)) })
    return (String(decoding: name, as: UTF8.self), text)
  }
}
