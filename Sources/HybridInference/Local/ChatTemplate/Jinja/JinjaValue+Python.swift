import Foundation

/// Python's `str()`, `repr()`, `==` and ordering, which jinja2 uses whenever
/// a template prints or compares a value.
extension JinjaValue {
  /// `str(value)`: what `{{ value }}` prints.
  var pythonString: String {
    switch self {
    case .undefined: ""
    case .string(let text): text
    default: pythonRepr
    }
  }

  /// `repr(value)`: how values print inside lists and dicts.
  var pythonRepr: String {
    switch self {
    case .undefined: ""
    case .none: "None"
    case .bool(let value): value ? "True" : "False"
    case .int(let value): String(value)
    case .double(let value): Self.pythonFloat(value)
    case .string(let text): Self.quoted(text)
    case .array(let items): "[" + items.map(\.pythonRepr).joined(separator: ", ") + "]"
    case .dict(let dict):
      "{" + dict.pairs.map { dict.keyValue($0.0).pythonRepr + ": " + $0.1.pythonRepr }.joined(separator: ", ") + "}"
    case .namespace(let namespace): "<Namespace \(JinjaValue.dict(namespace.attributes).pythonRepr)>"
    case .callable(let function): "<function \(function.name)>"
    }
  }

  /// Python's float repr: the shortest round-tripping digits, always with a
  /// decimal point or exponent.
  static func pythonFloat(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-inf" : "inf" }
    let magnitude = abs(value)
    if magnitude != 0, magnitude < 1e-4 || magnitude >= 1e16 {
      // Swift prints 1e-05 as "1e-05", Python as "1e-05": same layout.
      var text = "\(value)"
      if let range = text.range(of: "e-"), text[range.upperBound...].count == 1 {
        text.insert("0", at: range.upperBound)
      } else if let range = text.range(of: "e"), text[range.upperBound...].first != "-" {
        text.insert("+", at: range.upperBound)
      }
      return text
    }
    return "\(value)"
  }

  /// Python's string repr: single quotes unless the text has one and no double.
  static func quoted(_ text: String) -> String {
    let quote: Character = text.contains("'") && !text.contains("\"") ? "\"" : "'"
    var out = String(quote)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if Character(scalar) == quote {
          out += "\\" + String(quote)
        } else if scalar.value < 0x20 || scalar.value == 0x7F {
          out += String(format: "\\x%02x", scalar.value)
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out.append(quote)
    return out
  }

  /// Python's `==` (an undefined value equals nothing but another undefined one).
  func pythonEquals(_ other: JinjaValue) -> Bool {
    switch (self, other) {
    case (.undefined, .undefined), (.none, .none): return true
    case (.string(let a), .string(let b)): return a == b
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.pythonEquals($1) }
    case (.dict(let a), .dict(let b)):
      return a.keys.count == b.keys.count
        && a.pairs.allSatisfy { key, value in b[key].map { value.pythonEquals($0) } ?? false }
    case (.namespace(let a), .namespace(let b)): return a === b
    default:
      if let a = numeric, let b = other.numeric { return a == b }
      return false
    }
  }

  /// The value as a number, when Python would compare it as one (bools included).
  var numeric: Double? {
    switch self {
    case .bool(let value): value ? 1 : 0
    case .int(let value): Double(value)
    case .double(let value): value
    default: nil
    }
  }

  /// Python's `<`; nil when the two cannot be ordered.
  func pythonLess(_ other: JinjaValue) -> Bool? {
    switch (self, other) {
    case (.string(let a), .string(let b)): return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    case (.array(let a), .array(let b)):
      for (x, y) in zip(a, b) where !x.pythonEquals(y) { return x.pythonLess(y) }
      return a.count < b.count
    default:
      if case .int(let a) = self, case .int(let b) = other { return a < b }
      if let a = numeric, let b = other.numeric { return a < b }
      return nil
    }
  }
}
