import Foundation

/// `minimum`, `maximum` and their exclusive forms, compared exactly: an
/// integer beyond 2^53 (`exactInteger`) against a bound is never rounded
/// into range, and a bound beyond 2^53 is as exact as the answer.
enum NumberBounds {
  /// `value` when it is a number of either form.
  static func numeric(_ value: OrderedJSON) -> OrderedJSON? {
    switch value {
    case .number(let number) where number.isFinite: value
    case .exactInteger: value
    default: nil
    }
  }

  static func violation(_ value: OrderedJSON, _ node: CompiledSchema.Node, path: () -> String) -> String? {
    if let least = node.minimum, compare(value, least) < 0 { return "\(path()): below \(least.jsonText)" }
    if let most = node.maximum, compare(value, most) > 0 { return "\(path()): above \(most.jsonText)" }
    if let least = node.exclusiveMinimum, compare(value, least) <= 0 {
      return "\(path()): not above \(least.jsonText)"
    }
    if let most = node.exclusiveMaximum, compare(value, most) >= 0 {
      return "\(path()): not below \(most.jsonText)"
    }
    return nil
  }

  /// The sign of `a - b` for two numbers (0 when either is not one).
  static func compare(_ a: OrderedJSON, _ b: OrderedJSON) -> Int {
    switch (a, b) {
    case (.number(let x), .number(let y)): return x < y ? -1 : (x > y ? 1 : 0)
    case (.exactInteger(let x), .exactInteger(let y)): return compareIntegers(x.digits, y.digits)
    case (.exactInteger(let x), .number(let y)): return compare(x, y)
    case (.number(let x), .exactInteger(let y)): return -compare(y, x)
    default: return 0
    }
  }

  /// The sign of `integer - number`. Rounding to the nearest `Double` keeps
  /// order, so only a tie needs the digits: the tied `Double` is then an
  /// integer (beyond 2^53 every `Double` is), written out exactly.
  private static func compare(_ integer: JSONValue.ExactInteger, _ number: Double) -> Int {
    guard number.isFinite else { return number > 0 ? -1 : 1 }
    let nearest = integer.doubleValue
    if nearest != number { return nearest < number ? -1 : 1 }
    return compareIntegers(integer.digits, String(format: "%.0f", number))
  }

  /// The sign of `a - b` for two integers in JSON's syntax.
  static func compareIntegers(_ a: String, _ b: String) -> Int {
    let aNegative = a.hasPrefix("-")
    let bNegative = b.hasPrefix("-")
    if aNegative != bNegative { return aNegative ? -1 : 1 }
    let x = aNegative ? a.dropFirst() : a[...]
    let y = bNegative ? b.dropFirst() : b[...]
    let magnitude =
      x.count != y.count ? (x.count < y.count ? -1 : 1) : (x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1))
    return aNegative ? -magnitude : magnitude
  }
}
