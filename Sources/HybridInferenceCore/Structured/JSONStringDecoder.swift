/// The inside of a JSON string, read a piece at a time: plain runs, escapes
/// and surrogate pairs, any of which a piece may cut.
///
/// A cut escape gives no text until it is whole, so the text so far never
/// holds half of one (a snapshot drops it, as the stream promises).
struct JSONStringDecoder {
  private enum Escape: Equatable {
    case none
    /// After `\`.
    case backslash
    /// Reading the hex digits of `\u`; `high` is set for the second half of a pair.
    case unicode(digits: Int, value: UInt32, high: UInt32?)
    /// After a high surrogate: `\` of its low half must follow.
    case lowBackslash(high: UInt32)
    /// After a high surrogate and `\`: `u` must follow.
    case lowU(high: UInt32)
  }

  private var escape = Escape.none
  private var text = ""
  /// Set when the closing quote was read; the reader clears it.
  var closed = false
  /// A member name being read (kept here so pieces can cut it).
  var key = ""

  /// The text decoded since the last call.
  mutating func takeText() -> String {
    defer { text = "" }
    return text
  }

  /// Reads from `start` up to the closing quote (then `closed` is set) or
  /// the end of `bytes`; returns the index after what it read.
  mutating func read(_ bytes: ContiguousArray<UInt8>, from start: Int, offset: Int) throws(JSONPrefixParser.SyntaxError)
    -> Int
  {
    var index = start
    while index < bytes.count {
      if escape != .none {
        try escaped(bytes[index], at: offset + index)
        index += 1
        continue
      }
      let run = index
      while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
        index += 1
      }
      // Runs end at ASCII bytes or at the end of a piece, which is the end
      // of a whole `String`: never inside a scalar.
      if index > run { text += String(decoding: bytes[run..<index], as: UTF8.self) }
      guard index < bytes.count else { break }
      let byte = bytes[index]
      guard byte >= 0x20 else {
        throw .init(offset: offset + index, reason: "control character in a string")
      }
      index += 1
      if byte == UInt8(ascii: "\"") {
        closed = true
        return index
      }
      escape = .backslash
    }
    return index
  }

  private mutating func escaped(_ byte: UInt8, at offset: Int) throws(JSONPrefixParser.SyntaxError) {
    func fail(_ reason: String) -> JSONPrefixParser.SyntaxError { .init(offset: offset, reason: reason) }
    switch escape {
    case .none:
      break
    case .backslash:
      escape = .none
      switch byte {
      case UInt8(ascii: "\""): text += "\""
      case UInt8(ascii: "\\"): text += "\\"
      case UInt8(ascii: "/"): text += "/"
      case UInt8(ascii: "b"): text += "\u{08}"
      case UInt8(ascii: "f"): text += "\u{0C}"
      case UInt8(ascii: "n"): text += "\n"
      case UInt8(ascii: "r"): text += "\r"
      case UInt8(ascii: "t"): text += "\t"
      case UInt8(ascii: "u"): escape = .unicode(digits: 0, value: 0, high: nil)
      default: throw fail("invalid escape")
      }
    case .unicode(let digits, let value, let high):
      guard let digit = Self.hexDigit(byte) else { throw fail("invalid \\u escape") }
      let code = value << 4 | digit
      guard digits == 3 else {
        escape = .unicode(digits: digits + 1, value: code, high: high)
        return
      }
      escape = .none
      if let high {
        guard (0xDC00..<0xE000).contains(code) else { throw fail("unpaired surrogate") }
        try append(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00), fail)
      } else if (0xD800..<0xDC00).contains(code) {
        escape = .lowBackslash(high: code)
      } else {
        try append(code, fail)
      }
    case .lowBackslash(let high):
      guard byte == UInt8(ascii: "\\") else { throw fail("unpaired surrogate") }
      escape = .lowU(high: high)
    case .lowU(let high):
      guard byte == UInt8(ascii: "u") else { throw fail("unpaired surrogate") }
      escape = .unicode(digits: 0, value: 0, high: high)
    }
  }

  private mutating func append(
    _ code: UInt32, _ fail: (String) -> JSONPrefixParser.SyntaxError
  ) throws(JSONPrefixParser.SyntaxError) {
    guard let scalar = Unicode.Scalar(code) else { throw fail("unpaired surrogate") }
    text.unicodeScalars.append(scalar)
  }

  private static func hexDigit(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }
}
