import Foundation

/// Python's `str()`, `repr()`, `==` and ordering, which jinja2 uses whenever
/// a template prints or compares a value.
extension JinjaValue {
  /// `str(value)`: what `{{ value }}` prints.
  func pythonString(_ budget: JinjaBudget) -> String {
    switch self {
    case .undefined: ""
    case .string(let text): text
    default: pythonRepr(budget)
    }
  }

  /// `repr(value)`: how values print inside lists and dicts. Every item and
  /// byte is charged to `budget`; once it is spent the text stops short (the
  /// render then fails, so the short text is never used).
  func pythonRepr(_ budget: JinjaBudget) -> String {
    var out = ""
    var visiting: Set<ObjectIdentifier> = []
    writeRepr(into: &out, budget, &visiting)
    return out
  }

  /// `str(value)` outside a render (the tests read their fixtures with it), within a default budget.
  var pythonString: String { pythonString(JinjaBudget(JinjaBudget.Limits(inputBytes: 0, items: 0))) }

  private func writeRepr(into out: inout String, _ budget: JinjaBudget, _ visiting: inout Set<ObjectIdentifier>) {
    // An item, and a string's bytes (up to four per byte escaped) before they are written.
    guard budget.spend(steps: 1), budget.spend(allocating: 8) else { return }
    if case .string(let text) = self, !budget.spend(allocating: 4 * text.utf8.count) { return }
    switch self {
    case .undefined: break
    case .none: out += "None"
    case .bool(let value): out += value ? "True" : "False"
    case .int(let value): out += String(value)
    case .double(let value): out += Self.pythonFloat(value)
    case .string(let text): out += Self.quoted(text)
    case .array(let items):
      out += "["
      for (index, item) in items.enumerated() {
        if index > 0 { out += ", " }
        item.writeRepr(into: &out, budget, &visiting)
        if budget.failure != nil { return }
      }
      out += "]"
    case .dict(let dict):
      out += "{"
      for (index, (key, value)) in dict.pairs.enumerated() {
        if index > 0 { out += ", " }
        dict.keyValue(key).writeRepr(into: &out, budget, &visiting)
        out += ": "
        value.writeRepr(into: &out, budget, &visiting)
        if budget.failure != nil { return }
      }
      out += "}"
    case .namespace(let namespace):
      // Python's dict repr prints a dict already being printed as `{...}`.
      let identity = ObjectIdentifier(namespace)
      guard visiting.insert(identity).inserted else {
        out += "<Namespace {...}>"
        return
      }
      out += "<Namespace "
      JinjaValue.dict(namespace.attributes).writeRepr(into: &out, budget, &visiting)
      out += ">"
      visiting.remove(identity)
    case .callable(let function): out += "<function \(function.name)>"
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

  /// Python's `==` (an undefined value equals nothing but another undefined
  /// one); each pair compared is a step of `budget`, false once it is spent.
  func pythonEquals(_ other: JinjaValue, _ budget: JinjaBudget) -> Bool {
    guard budget.spend(steps: 1) else { return false }
    switch (self, other) {
    case (.undefined, .undefined), (.none, .none): return true
    case (.string(let a), .string(let b)):
      budget.spend(scanning: min(a.utf8.count, b.utf8.count))
      return a == b
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.pythonEquals($1, budget) }
    case (.dict(let a), .dict(let b)):
      return a.keys.count == b.keys.count
        && a.pairs.allSatisfy { key, value in b[key].map { value.pythonEquals($0, budget) } ?? false }
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

  /// Python's `<`; nil when the two cannot be ordered. Each pair compared
  /// is a step of `budget`.
  func pythonLess(_ other: JinjaValue, _ budget: JinjaBudget) -> Bool? {
    guard budget.spend(steps: 1) else { return false }
    switch (self, other) {
    case (.string(let a), .string(let b)):
      budget.spend(scanning: min(a.utf8.count, b.utf8.count))
      return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    case (.array(let a), .array(let b)):
      for (x, y) in zip(a, b) where !x.pythonEquals(y, budget) { return x.pythonLess(y, budget) }
      return a.count < b.count
    default:
      if case .int(let a) = self, case .int(let b) = other { return a < b }
      if let a = numeric, let b = other.numeric { return a < b }
      return nil
    }
  }
}
