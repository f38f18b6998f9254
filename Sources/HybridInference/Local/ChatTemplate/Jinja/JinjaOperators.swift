import Foundation

/// Python's arithmetic and comparisons on template values.
enum JinjaOperators {
  static func binary(_ op: String, _ left: JinjaValue, _ right: JinjaValue, line: Int) throws(JinjaError)
    -> JinjaValue
  {
    let failure = JinjaError(
      kind: .runtime, message: "unsupported operand types for \(op): '\(left.typeName)' and '\(right.typeName)'",
      line: line)
    if op == "~" { return .string(left.pythonString + right.pythonString) }
    if left.isUndefined || right.isUndefined { throw failure }
    switch (op, left, right) {
    case ("+", .string(let a), .string(let b)): return .string(a + b)
    case ("+", .array(let a), .array(let b)): return .array(a + b)
    case ("*", .string(let a), .int(let b)): return .string(String(repeating: a, count: max(0, b)))
    case ("*", .array(let a), .int(let b)): return .array(Array(repeating: a, count: max(0, b)).flatMap { $0 })
    case ("%", .string(let format), _): return .string(try printf(format, right, line: line))
    default: break
    }
    if let a = integer(left), let b = integer(right) {
      switch op {
      case "+": return .int(a &+ b)
      case "-": return .int(a &- b)
      case "*": return .int(a &* b)
      case "/":
        guard b != 0 else { throw JinjaError(kind: .runtime, message: "division by zero", line: line) }
        return .double(Double(a) / Double(b))
      case "//", "%":
        guard b != 0 else { throw JinjaError(kind: .runtime, message: "division by zero", line: line) }
        let quotient = Int((Double(a) / Double(b)).rounded(.down))
        return .int(op == "//" ? quotient : a - quotient * b)
      case "**": return b >= 0 ? .int(Int(pow(Double(a), Double(b)))) : .double(pow(Double(a), Double(b)))
      default: throw failure
      }
    }
    guard let a = left.numeric, let b = right.numeric else { throw failure }
    switch op {
    case "+": return .double(a + b)
    case "-": return .double(a - b)
    case "*": return .double(a * b)
    case "/": return .double(a / b)
    case "//": return .double((a / b).rounded(.down))
    case "%": return .double(a - (a / b).rounded(.down) * b)
    case "**": return .double(pow(a, b))
    default: throw failure
    }
  }

  private static func integer(_ value: JinjaValue) -> Int? {
    switch value {
    case .int(let number): number
    case .bool(let flag): flag ? 1 : 0
    default: nil
    }
  }

  static func compare(_ op: String, _ left: JinjaValue, _ right: JinjaValue, line: Int) throws(JinjaError) -> Bool {
    switch op {
    case "==": return left.pythonEquals(right)
    case "!=": return !left.pythonEquals(right)
    case "in": return try contains(right, left, line: line)
    case "not in": return try !contains(right, left, line: line)
    default:
      let ordered: Bool?
      switch op {
      case "<": ordered = left.pythonLess(right)
      case ">": ordered = right.pythonLess(left)
      case "<=": ordered = right.pythonLess(left).map { !$0 }
      default: ordered = left.pythonLess(right).map { !$0 }
      }
      guard let ordered else {
        throw JinjaError(
          kind: .runtime, message: "'\(op)' not supported between '\(left.typeName)' and '\(right.typeName)'",
          line: line)
      }
      return ordered
    }
  }

  static func contains(_ container: JinjaValue, _ item: JinjaValue, line: Int) throws(JinjaError) -> Bool {
    switch container {
    case .undefined: return false
    case .string(let text):
      guard case .string(let needle) = item else {
        throw JinjaError(kind: .runtime, message: "'in <string>' requires string as left operand", line: line)
      }
      return needle.isEmpty || text.contains(needle)
    case .array(let items): return items.contains { $0.pythonEquals(item) }
    case .dict(let dict):
      return dict[JinjaDict.storageKey(item)] != nil
    case .namespace(let namespace):
      guard case .string(let key) = item else { return false }
      return namespace.attributes[key] != nil
    default:
      throw JinjaError(kind: .runtime, message: "argument of type '\(container.typeName)' is not iterable", line: line)
    }
  }

  /// `"%s" % value`: the `s`, `d` and `r` conversions.
  static func printf(_ format: String, _ argument: JinjaValue, line: Int) throws(JinjaError) -> String {
    var arguments: [JinjaValue]
    if case .array(let items) = argument { arguments = items } else { arguments = [argument] }
    var out = ""
    var iterator = format.makeIterator()
    while let character = iterator.next() {
      guard character == "%" else {
        out.append(character)
        continue
      }
      guard let conversion = iterator.next() else { break }
      if conversion == "%" {
        out.append("%")
        continue
      }
      guard !arguments.isEmpty else {
        throw JinjaError(kind: .runtime, message: "not enough arguments for format string", line: line)
      }
      let value = arguments.removeFirst()
      switch conversion {
      case "s": out += value.pythonString
      case "r": out += value.pythonRepr
      case "d", "i": out += String(Int(value.numeric ?? 0))
      default: throw JinjaError(kind: .unsupported, message: "format '%\(conversion)' is unsupported", line: line)
      }
    }
    return out
  }
}
