/// A JSON number read a byte at a time, remembering the longest prefix that
/// is a number itself (what a snapshot shows of a number cut short).
///
/// JSON's grammar, stricter than `Double(_:)`: no `+1`, `.5`, `01` or `1.`.
/// Integer literals beyond ±2^53, which a `Double` cannot hold exactly,
/// become `JSONScalar.exactInteger` (see `JSONValue.ExactInteger`); a number
/// beyond `Double`'s range is no value at all (the parser refuses it).
struct JSONNumberScanner {
  private enum State {
    case start, minus, zero, integer, dot, fraction, exponentMark, exponentSign, exponent

    var isAccepting: Bool {
      switch self {
      case .zero, .integer, .fraction, .exponent: true
      default: false
      }
    }
  }

  private var state = State.start
  private var text: [UInt8] = []
  /// Length of the longest accepted prefix, and whether it is an integer literal.
  private var accepted = 0
  private var acceptedIsInteger = true

  /// Bytes that may continue a number; any other ends it.
  static func isNumberByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
      UInt8(ascii: "e"), UInt8(ascii: "E"):
      true
    default: false
    }
  }

  var length: Int { text.count }
  var isAccepting: Bool { state.isAccepting }

  /// Adds `byte`; false when the number cannot go on with it.
  mutating func add(_ byte: UInt8) -> Bool {
    let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    let isExponent = byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    switch (state, byte) {
    case (.start, UInt8(ascii: "-")): state = .minus
    case (.start, UInt8(ascii: "0")), (.minus, UInt8(ascii: "0")): state = .zero
    case (.start, _) where isDigit, (.minus, _) where isDigit, (.integer, _) where isDigit: state = .integer
    case (.zero, UInt8(ascii: ".")), (.integer, UInt8(ascii: ".")): state = .dot
    case (.dot, _) where isDigit, (.fraction, _) where isDigit: state = .fraction
    case (.zero, _) where isExponent, (.integer, _) where isExponent, (.fraction, _) where isExponent:
      state = .exponentMark
    case (.exponentMark, UInt8(ascii: "+")), (.exponentMark, UInt8(ascii: "-")): state = .exponentSign
    case (.exponentMark, _) where isDigit, (.exponentSign, _) where isDigit, (.exponent, _) where isDigit:
      state = .exponent
    default: return false
    }
    text.append(byte)
    if state.isAccepting {
      accepted = text.count
      acceptedIsInteger = state == .zero || state == .integer
    }
    return true
  }

  /// The value of the longest accepted prefix; nil when there is none or
  /// it is beyond `Double`'s range.
  var longestValue: JSONScalar? {
    guard accepted > 0 else { return nil }
    let literal = String(decoding: text[..<accepted], as: UTF8.self)
    if acceptedIsInteger, Self.isBeyondExactDoubles(literal), let exact = JSONValue.ExactInteger(literal) {
      return .exactInteger(exact)
    }
    guard let number = Double(literal), number.isFinite else { return nil }
    return .number(number)
  }

  /// Whether an integer literal is beyond ±2^53 (`ExactInteger.exactDoubleLimit`);
  /// digits too many for `UInt64` are beyond it too.
  static func isBeyondExactDoubles(_ literal: String) -> Bool {
    let magnitude = literal.hasPrefix("-") ? literal.dropFirst() : literal[...]
    return UInt64(magnitude).map { $0 > JSONValue.ExactInteger.exactDoubleLimit } ?? true
  }
}
