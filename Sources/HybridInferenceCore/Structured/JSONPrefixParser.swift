/// Reads JSON text, or the beginning of it, a piece at a time, keeping
/// member order.
///
/// Streaming structured output needs the value so far at every delta, and
/// that value must itself be valid JSON: an unfinished string is closed
/// where the text stops, a member whose value has not started (or is an
/// unfinished `true`, `null`, ...) is left out, and unfinished containers
/// are closed. The same parser reads complete documents strictly, so a
/// schema string, a tool call and a model's final answer go through one
/// code path.
///
/// It is a state machine, not a recursive descent: the text is server
/// input, and a recursive reader of `[[[[...` overflows the stack. State is
/// kept between pieces, so each piece costs what it adds; what the pieces
/// build is up to the `JSONEventSink` it reports to (`OrderedJSONBuilder`
/// for whole values, `JSONSnapshotBuilder` for a stream's snapshots).
///
/// Limits, past which the text is refused with a `SyntaxError`:
/// `JSONValue.maximumDepth` nested containers (Foundation's `JSONDecoder`
/// has the same) and numbers of `maximumNumberLength` characters.
package struct JSONPrefixParser {
  /// The literals' bytes, made once (a literal starts often in an answer).
  private static let trueWord = Array("true".utf8)
  private static let falseWord = Array("false".utf8)
  private static let nullWord = Array("null".utf8)
  /// The longest number literal read, in characters.
  static let maximumNumberLength = 1024

  /// Why text is not JSON (or not the beginning of JSON).
  package struct SyntaxError: Error, CustomStringConvertible {
    let offset: Int
    let reason: String
    package var description: String { "\(reason) at byte \(offset)" }
  }

  enum Container { case array, object }

  private enum Expect {
    /// A value must start here: at the top, after `:`, after `,` in an array.
    case value
    /// Just after `[`.
    case valueOrClose
    /// Just after `{`.
    case keyOrClose
    /// After `,` in an object.
    case key
    case colon
    case commaOrClose
    /// The top-level value is complete.
    case done
  }

  private enum Token {
    case none
    case string(isKey: Bool)
    case number
    case literal(JSONScalar, word: [UInt8], matched: Int)
  }

  /// Whether text after a complete value, or a value cut short, is an error.
  private let strict: Bool
  private var containers: [Container] = []
  private var expect = Expect.value
  private var token = Token.none
  private var strings = JSONStringDecoder()
  private var number = JSONNumberScanner()
  /// Bytes read before the current piece, for error offsets.
  private var offset = 0

  /// A parser for a complete document (`strict`) or for a prefix of one.
  init(strict: Bool) {
    self.strict = strict
  }

  /// Whether the top-level value is complete.
  var isComplete: Bool { expect == .done }

  /// The longest number that the number being read so far is, if any.
  var partialNumber: JSONScalar? {
    guard case .number = token else { return nil }
    return number.longestValue
  }

  /// A complete document: anything after the value but whitespace is an error.
  package static func parse(_ text: String) throws(SyntaxError) -> OrderedJSON {
    var parser = JSONPrefixParser(strict: true)
    var builder = OrderedJSONBuilder()
    try parser.feed(text[...], into: &builder)
    try parser.finish(into: &builder)
    guard let value = builder.value(partialNumber: nil) else {
      throw SyntaxError(offset: text.utf8.count, reason: "the document ends early")
    }
    return value
  }

  /// The value so far of a document that may be cut anywhere; nil when not
  /// even its beginning is usable yet. Text after a complete value is ignored.
  static func parsePrefix(_ text: String) throws(SyntaxError) -> OrderedJSON? {
    var parser = JSONPrefixParser(strict: false)
    var builder = OrderedJSONBuilder()
    try parser.feed(text[...], into: &builder)
    return builder.value(partialNumber: parser.partialNumber)
  }

  /// Reads the next piece of the text. After a complete value a strict
  /// parser refuses anything but whitespace; a prefix parser ignores the rest.
  mutating func feed<Sink: JSONEventSink>(_ text: Substring, into sink: inout Sink) throws(SyntaxError) {
    let bytes = ContiguousArray(text.utf8)
    var index = 0
    while index < bytes.count {
      switch token {
      case .string(let isKey):
        let end = try strings.read(bytes, from: index, offset: offset)
        let piece = strings.takeText()
        if !piece.isEmpty {
          if isKey { strings.key += piece } else { sink.appendString(piece) }
        }
        index = end
        guard strings.closed else { continue }
        strings.closed = false
        token = .none
        if isKey {
          sink.key(strings.key)
          strings.key = ""
          expect = .colon
        } else {
          sink.endString()
          valueDone()
        }
      case .number:
        let byte = bytes[index]
        if JSONNumberScanner.isNumberByte(byte) {
          guard number.add(byte) else { throw fail(index, "malformed number") }
          guard number.length <= Self.maximumNumberLength else {
            throw fail(index, "a number longer than \(Self.maximumNumberLength) characters")
          }
          index += 1
        } else {
          try endNumber(at: index, into: &sink)
        }
      case .literal(let value, let word, let matched):
        guard bytes[index] == word[matched] else {
          throw fail(index, "expected \(String(decoding: word, as: UTF8.self))")
        }
        index += 1
        if matched + 1 == word.count {
          token = .none
          sink.scalar(value)
          valueDone()
        } else {
          token = .literal(value, word: word, matched: matched + 1)
        }
      case .none:
        let byte = bytes[index]
        if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
          index += 1
          continue
        }
        if expect == .done {
          guard strict else {
            // What follows a complete value is not read at all.
            index = bytes.count
            continue
          }
          throw fail(index, "unexpected text after the value")
        }
        try structural(byte, at: index, into: &sink)
        index += 1
      }
    }
    offset += bytes.count
  }

  /// Ends a strict document: a number at the very end is complete; anything
  /// else still open means the document ends early.
  mutating func finish<Sink: JSONEventSink>(into sink: inout Sink) throws(SyntaxError) {
    if case .number = token { try endNumber(at: 0, into: &sink) }
    guard case .none = token, expect == .done else {
      throw SyntaxError(offset: offset, reason: "the document ends early")
    }
  }

  /// A byte outside any string, number or literal.
  private mutating func structural<Sink: JSONEventSink>(_ byte: UInt8, at index: Int, into sink: inout Sink)
    throws(SyntaxError)
  {
    switch expect {
    case .value, .valueOrClose:
      if byte == UInt8(ascii: "]"), expect == .valueOrClose { return close(into: &sink) }
      try startValue(byte, at: index, into: &sink)
    case .keyOrClose, .key:
      if byte == UInt8(ascii: "}"), expect == .keyOrClose { return close(into: &sink) }
      guard byte == UInt8(ascii: "\"") else { throw fail(index, "expected a member name") }
      token = .string(isKey: true)
    case .colon:
      guard byte == UInt8(ascii: ":") else { throw fail(index, "expected :") }
      expect = .value
    case .commaOrClose:
      let inArray = containers.last == .array
      if byte == UInt8(ascii: ",") {
        expect = inArray ? .value : .key
      } else if byte == UInt8(ascii: inArray ? "]" : "}") {
        close(into: &sink)
      } else {
        throw fail(index, inArray ? "expected , or ]" : "expected , or }")
      }
    case .done:
      break
    }
  }

  private mutating func startValue<Sink: JSONEventSink>(_ byte: UInt8, at index: Int, into sink: inout Sink)
    throws(SyntaxError)
  {
    switch byte {
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      guard containers.count < JSONValue.maximumDepth else {
        throw fail(index, "the value nests deeper than \(JSONValue.maximumDepth) levels")
      }
      let container: Container = byte == UInt8(ascii: "[") ? .array : .object
      containers.append(container)
      sink.open(container)
      expect = container == .array ? .valueOrClose : .keyOrClose
    case UInt8(ascii: "\""):
      token = .string(isKey: false)
      sink.beginString()
    case UInt8(ascii: "t"): token = .literal(.bool(true), word: Self.trueWord, matched: 1)
    case UInt8(ascii: "f"): token = .literal(.bool(false), word: Self.falseWord, matched: 1)
    case UInt8(ascii: "n"): token = .literal(.null, word: Self.nullWord, matched: 1)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      number = JSONNumberScanner()
      guard number.add(byte) else { throw fail(index, "malformed number") }
      token = .number
    default:
      throw fail(index, "unexpected character")
    }
  }

  private mutating func endNumber<Sink: JSONEventSink>(at index: Int, into sink: inout Sink) throws(SyntaxError) {
    guard number.isAccepting else { throw fail(index, "malformed number") }
    guard let value = number.longestValue else { throw fail(index, "a number out of range") }
    token = .none
    sink.scalar(value)
    valueDone()
  }

  private mutating func close<Sink: JSONEventSink>(into sink: inout Sink) {
    containers.removeLast()
    sink.close()
    valueDone()
  }

  private mutating func valueDone() {
    expect = containers.isEmpty ? .done : .commaOrClose
  }

  private func fail(_ index: Int, _ reason: String) -> SyntaxError {
    SyntaxError(offset: offset + index, reason: reason)
  }
}

/// A scalar the parser read: what `true`, `null` or a number token stands for.
enum JSONScalar: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case exactInteger(JSONValue.ExactInteger)
}

/// What a `JSONPrefixParser` reports, in text order. A sink builds what it
/// needs from it; the parser has checked the syntax and the depth already.
protocol JSONEventSink {
  /// A container starts, as the next value.
  mutating func open(_ container: JSONPrefixParser.Container)
  /// The innermost container ends.
  mutating func close()
  /// A member name: the next value is that member's.
  mutating func key(_ name: String)
  /// A complete scalar, as the next value.
  mutating func scalar(_ value: JSONScalar)
  /// A string starts, as the next value; its text follows in pieces.
  mutating func beginString()
  mutating func appendString(_ piece: String)
  mutating func endString()
}
