import Foundation

/// Python's arithmetic and comparisons on template values.
enum JinjaOperators {
  static func binary(
    _ op: String, _ left: JinjaValue, _ right: JinjaValue, line: Int, _ budget: JinjaBudget
  ) throws(JinjaError) -> JinjaValue {
    let failure = JinjaError(
      kind: .runtime, message: "unsupported operand types for \(op): '\(left.typeName)' and '\(right.typeName)'",
      line: line)
    if op == "~" {
      let (a, b) = (left.pythonString(budget), right.pythonString(budget))
      try budget.allocate(a.utf8.count.addingClamped(b.utf8.count), line)
      return .string(a + b)
    }
    if left.isUndefined || right.isUndefined { throw failure }
    switch (op, left, right) {
    case ("+", .string(let a), .string(let b)):
      try budget.allocate(a.utf8.count.addingClamped(b.utf8.count), line)
      return .string(a + b)
    case ("+", .array(let a), .array(let b)):
      try budget.allocate(elements: a.count.addingClamped(b.count), line)
      return .array(a + b)
    case ("*", .string(let a), .int(let b)):
      // The size is charged before the text is made: `'a' * 10**12` is refused, not attempted.
      try budget.allocate(a.utf8.count.multipliedClamped(by: max(0, b)), line)
      return .string(String(repeating: a, count: max(0, b)))
    case ("*", .array(let a), .int(let b)):
      try budget.allocate(elements: a.count.multipliedClamped(by: max(0, b)), line)
      return .array(Array(repeating: a, count: max(0, b)).flatMap { $0 })
    case ("%", .string(let format), _): return .string(try printf(format, right, line: line, budget))
    default: break
    }
    if let a = integer(left), let b = integer(right) { return try integerArithmetic(op, a, b, line: line, failure) }
    guard let a = left.numeric, let b = right.numeric else { throw failure }
    if b == 0, ["/", "//", "%"].contains(op) {
      throw JinjaError(kind: .runtime, message: "float division by zero", line: line)
    }
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

  /// Python's integer operators, checked: where Python would make an
  /// integer wider than 64 bits, the template fails (never a trap).
  private static func integerArithmetic(_ op: String, _ a: Int, _ b: Int, line: Int, _ failure: JinjaError)
    throws(JinjaError) -> JinjaValue
  {
    func exact(_ result: (partialValue: Int, overflow: Bool)) throws(JinjaError) -> Int {
      guard !result.overflow else {
        throw JinjaError(kind: .runtime, message: "integer overflow in \(op)", line: line)
      }
      return result.partialValue
    }
    func checked(_ result: (partialValue: Int, overflow: Bool)) throws(JinjaError) -> JinjaValue {
      .int(try exact(result))
    }
    switch op {
    case "+": return try checked(a.addingReportingOverflow(b))
    case "-": return try checked(a.subtractingReportingOverflow(b))
    case "*": return try checked(a.multipliedReportingOverflow(by: b))
    case "/":
      guard b != 0 else { throw JinjaError(kind: .runtime, message: "division by zero", line: line) }
      return .double(Double(a) / Double(b))
    case "//", "%":
      guard b != 0 else { throw JinjaError(kind: .runtime, message: "integer division or modulo by zero", line: line) }
      // Python floors; Swift truncates. Int.min // -1 is the one overflow.
      if b == -1 { return op == "%" ? .int(0) : try checked(Int(0).subtractingReportingOverflow(a)) }
      let (quotient, remainder) = a.quotientAndRemainder(dividingBy: b)
      let adjust = remainder != 0 && (remainder < 0) != (b < 0)
      return .int(op == "//" ? (adjust ? quotient - 1 : quotient) : (adjust ? remainder + b : remainder))
    case "**":
      guard b >= 0 else { return .double(pow(Double(a), Double(b))) }
      var result = 1
      var base = a
      var exponent = b
      while exponent > 0 {
        if exponent & 1 == 1 { result = try exact(result.multipliedReportingOverflow(by: base)) }
        exponent >>= 1
        if exponent > 0 { base = try exact(base.multipliedReportingOverflow(by: base)) }
      }
      return .int(result)
    default: throw failure
    }
  }

  /// How many items `range(start, stop, step)` has; nil past `Int.max`.
  static func rangeCount(_ start: Int, _ stop: Int, _ step: Int) -> Int? {
    guard step > 0 ? start < stop : start > stop else { return 0 }
    let distance = step > 0 ? UInt(bitPattern: stop &- start) : UInt(bitPattern: start &- stop)
    return Int(exactly: (distance - 1) / step.magnitude + 1)
  }

  private static func integer(_ value: JinjaValue) -> Int? {
    switch value {
    case .int(let number): number
    case .bool(let flag): flag ? 1 : 0
    default: nil
    }
  }

  static func compare(_ op: String, _ left: JinjaValue, _ right: JinjaValue, line: Int, _ budget: JinjaBudget)
    throws(JinjaError) -> Bool
  {
    switch op {
    case "==": return left.pythonEquals(right, budget)
    case "!=": return !left.pythonEquals(right, budget)
    case "in": return try contains(right, left, line: line, budget)
    case "not in": return try !contains(right, left, line: line, budget)
    default:
      let ordered: Bool?
      switch op {
      case "<": ordered = left.pythonLess(right, budget)
      case ">": ordered = right.pythonLess(left, budget)
      case "<=": ordered = right.pythonLess(left, budget).map { !$0 }
      default: ordered = left.pythonLess(right, budget).map { !$0 }
      }
      guard let ordered else {
        throw JinjaError(
          kind: .runtime, message: "'\(op)' not supported between '\(left.typeName)' and '\(right.typeName)'",
          line: line)
      }
      return ordered
    }
  }

  static func contains(_ container: JinjaValue, _ item: JinjaValue, line: Int, _ budget: JinjaBudget)
    throws(JinjaError) -> Bool
  {
    switch container {
    case .undefined: return false
    case .string(let text):
      guard case .string(let needle) = item else {
        throw JinjaError(kind: .runtime, message: "'in <string>' requires string as left operand", line: line)
      }
      guard budget.spend(searching: needle.utf8.count, in: text.utf8.count) else { try budget.stop() }
      return needle.isEmpty || text.contains(needle)
    case .array(let items): return items.contains { $0.pythonEquals(item, budget) }
    case .dict(let dict):
      return dict[JinjaDict.storageKey(item, budget)] != nil
    case .namespace(let namespace):
      guard case .string(let key) = item else { return false }
      return namespace.attributes[key] != nil
    default:
      throw JinjaError(kind: .runtime, message: "argument of type '\(container.typeName)' is not iterable", line: line)
    }
  }

  /// `"%s" % value`: the `s`, `d` and `r` conversions.
  static func printf(_ format: String, _ argument: JinjaValue, line: Int, _ budget: JinjaBudget) throws(JinjaError)
    -> String
  {
    let arguments: [JinjaValue]
    if case .array(let items) = argument { arguments = items } else { arguments = [argument] }
    var next = 0
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
      guard next < arguments.count else {
        throw JinjaError(kind: .runtime, message: "not enough arguments for format string", line: line)
      }
      let value = arguments[next]
      next += 1
      let piece: String
      switch conversion {
      case "s": piece = value.pythonString(budget)
      case "r": piece = value.pythonRepr(budget)
      case "d", "i":
        if case .int(let integer) = value {
          piece = String(integer)
          break
        }
        let number = value.numeric ?? 0
        // Int(_:) traps on a non-finite or out-of-range float; Python's %d
        // would print a wider integer, which this engine does not have.
        guard let integer = Int(exactly: number.rounded(.towardZero)) else {
          throw JinjaError(kind: .runtime, message: "%d format: \(number) is not a 64-bit integer", line: line)
        }
        piece = String(integer)
      default: throw JinjaError(kind: .unsupported, message: "format '%\(conversion)' is unsupported", line: line)
      }
      try budget.allocate(piece.utf8.count, line)
      out += piece
    }
    return out
  }
}
