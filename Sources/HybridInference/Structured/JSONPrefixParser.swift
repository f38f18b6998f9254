/// Parses JSON text, or the beginning of it, keeping member order.
///
/// Streaming structured output needs the value so far at every delta, and
/// that value must itself be valid JSON: an unfinished string is closed
/// where the text stops, a member whose value has not started (or is an
/// unfinished `true`, `null`, ...) is left out, and unfinished containers
/// are closed. The same parser reads complete documents strictly, so a
/// schema string and a model's final answer go through one code path.
struct JSONPrefixParser {
  private let bytes: [UInt8]
  private var index = 0
  /// Set when the text ended inside the value.
  private(set) var ended = false

  /// Why text is not JSON (or not the beginning of JSON).
  struct SyntaxError: Error, CustomStringConvertible {
    let offset: Int
    let reason: String
    var description: String { "\(reason) at byte \(offset)" }
  }

  private init(_ text: String) {
    bytes = Array(text.utf8)
  }

  /// A complete document: anything after the value but whitespace is an error.
  static func parse(_ text: String) throws(SyntaxError) -> OrderedJSON {
    var parser = JSONPrefixParser(text)
    parser.skipWhitespace()
    let value = try parser.parseValue()
    parser.skipWhitespace()
    guard let value, !parser.ended else {
      throw SyntaxError(offset: parser.index, reason: "the document ends early")
    }
    guard parser.index == parser.bytes.count else {
      throw SyntaxError(offset: parser.index, reason: "unexpected text after the value")
    }
    return value
  }

  /// The value so far of a document that may be cut anywhere; nil when not
  /// even its beginning is usable yet. Text after a complete value is ignored.
  static func parsePrefix(_ text: String) throws(SyntaxError) -> OrderedJSON? {
    var parser = JSONPrefixParser(text)
    parser.skipWhitespace()
    return try parser.parseValue()
  }

  private mutating func skipWhitespace() {
    while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
  }

  private var atEnd: Bool { index >= bytes.count }

  private func fail(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

  private mutating func parseValue() throws(SyntaxError) -> OrderedJSON? {
    guard !atEnd else {
      ended = true
      return nil
    }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
    case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
    case UInt8(ascii: "n"): return try parseLiteral("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
    default: throw fail("unexpected character")
    }
  }

  private mutating func parseLiteral(_ word: String, _ value: OrderedJSON) throws(SyntaxError) -> OrderedJSON? {
    for byte in word.utf8 {
      guard !atEnd else {
        ended = true
        return nil
      }
      guard bytes[index] == byte else { throw fail("expected \(word)") }
      index += 1
    }
    return value
  }

  private mutating func parseNumber() throws(SyntaxError) -> OrderedJSON? {
    let start = index
    let allowed = Set("+-0123456789.eE".utf8)
    while !atEnd, allowed.contains(bytes[index]) { index += 1 }
    if atEnd { ended = true }
    var text = String(decoding: bytes[start..<index], as: UTF8.self)
    if let number = Double(text), Self.isJSONNumber(text) { return .number(number) }
    guard ended else { throw fail("malformed number") }
    // Cut mid-number: the longest prefix that is a number, if any.
    while !text.isEmpty {
      text.removeLast()
      if let number = Double(text), Self.isJSONNumber(text) { return .number(number) }
    }
    return nil
  }

  /// JSON's number syntax, stricter than `Double(_:)` (no `+1`, `.5`, `01`, `1.`).
  static func isJSONNumber(_ text: String) -> Bool {
    var rest = Substring(text)
    if rest.first == "-" { rest = rest.dropFirst() }
    let integer = rest.prefix { $0.isASCII && $0.isNumber }
    guard !integer.isEmpty, integer == "0" || integer.first != "0" else { return false }
    rest = rest.dropFirst(integer.count)
    if rest.first == "." {
      let fraction = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
      guard !fraction.isEmpty else { return false }
      rest = rest.dropFirst(1 + fraction.count)
    }
    if rest.first == "e" || rest.first == "E" {
      rest = rest.dropFirst()
      if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
      let exponent = rest.prefix { $0.isASCII && $0.isNumber }
      guard !exponent.isEmpty else { return false }
      rest = rest.dropFirst(exponent.count)
    }
    return rest.isEmpty
  }

  /// A string; cut short, the text so far (a cut escape dropped).
  private mutating func parseString() throws(SyntaxError) -> String {
    index += 1
    var scalars = String.UnicodeScalarView()
    var run = index
    func flush(_ end: Int) {
      scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars)
    }
    while !atEnd {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        flush(index)
        index += 1
        return String(scalars)
      }
      if byte < 0x20 { throw fail("control character in a string") }
      if byte != UInt8(ascii: "\\") {
        index += 1
        continue
      }
      flush(index)
      guard index + 1 < bytes.count else {
        index = bytes.count
        ended = true
        return String(scalars)
      }
      let escape = bytes[index + 1]
      index += 2
      switch escape {
      case UInt8(ascii: "\""): scalars.append("\"")
      case UInt8(ascii: "\\"): scalars.append("\\")
      case UInt8(ascii: "/"): scalars.append("/")
      case UInt8(ascii: "b"): scalars.append("\u{08}")
      case UInt8(ascii: "f"): scalars.append("\u{0C}")
      case UInt8(ascii: "n"): scalars.append("\n")
      case UInt8(ascii: "r"): scalars.append("\r")
      case UInt8(ascii: "t"): scalars.append("\t")
      case UInt8(ascii: "u"):
        guard let scalar = try parseUnicodeEscape() else {
          index = bytes.count
          ended = true
          return String(scalars)
        }
        scalars.append(scalar)
      default: throw fail("invalid escape")
      }
      run = index
    }
    flush(bytes.count)
    ended = true
    return String(scalars)
  }

  /// The scalar of `\uXXXX` (a surrogate pair joined); nil when the text is cut.
  private mutating func parseUnicodeEscape() throws(SyntaxError) -> Unicode.Scalar? {
    guard let high = try hex4() else { return nil }
    if (0xD800..<0xDC00).contains(high) {
      guard index + 1 < bytes.count else { return nil }
      guard bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
        throw fail("unpaired surrogate")
      }
      index += 2
      guard let low = try hex4() else { return nil }
      guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
      return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }
    guard let scalar = Unicode.Scalar(high) else { throw fail("unpaired surrogate") }
    return scalar
  }

  private mutating func hex4() throws(SyntaxError) -> UInt32? {
    guard index + 4 <= bytes.count else { return nil }
    let text = String(decoding: bytes[index..<index + 4], as: UTF8.self)
    guard let value = UInt32(text, radix: 16) else { throw fail("invalid \\u escape") }
    index += 4
    return value
  }

  private mutating func parseArray() throws(SyntaxError) -> OrderedJSON {
    index += 1
    var items: [OrderedJSON] = []
    skipWhitespace()
    if !atEnd, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(items)
    }
    while true {
      skipWhitespace()
      let item = try parseValue()
      if let item { items.append(item) }
      if ended { return .array(items) }
      skipWhitespace()
      guard !atEnd else {
        ended = true
        return .array(items)
      }
      if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(items)
      }
      guard bytes[index] == UInt8(ascii: ",") else { throw fail("expected , or ]") }
      index += 1
    }
  }

  private mutating func parseObject() throws(SyntaxError) -> OrderedJSON {
    index += 1
    var members: [(String, OrderedJSON)] = []
    skipWhitespace()
    if !atEnd, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard !atEnd else {
        ended = true
        return .object(members)
      }
      guard bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
      let key = try parseString()
      if ended { return .object(members) }
      skipWhitespace()
      guard !atEnd else {
        ended = true
        return .object(members)
      }
      guard bytes[index] == UInt8(ascii: ":") else { throw fail("expected :") }
      index += 1
      skipWhitespace()
      let value = try parseValue()
      if let value { members.append((key, value)) }
      if ended { return .object(members) }
      skipWhitespace()
      guard !atEnd else {
        ended = true
        return .object(members)
      }
      if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      }
      guard bytes[index] == UInt8(ascii: ",") else { throw fail("expected , or }") }
      index += 1
    }
  }
}
