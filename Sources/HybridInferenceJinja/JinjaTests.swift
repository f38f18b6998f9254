/// The `is` tests, as jinja2 3.1 defines them (an undefined value is
/// iterable and a sequence, as Python's duck typing finds it).
enum JinjaTests {
  static let names: Set<String> = [
    "defined", "undefined", "none", "string", "mapping", "iterable", "sequence", "number", "integer", "float",
    "boolean", "true", "false", "equalto", "eq", "==", "ne", "!=", "sameas", "odd", "even", "divisibleby", "in",
    "callable", "lower", "upper", "gt", "lt", "ge", "le", "greaterthan", "lessthan",
  ]

  static func apply(
    _ name: String, _ value: JinjaValue, _ arguments: JinjaArguments, line: Int, _ budget: JinjaBudget
  ) throws(JinjaError) -> Bool {
    let other = arguments.positional.first ?? .none
    switch name {
    case "defined": return !value.isUndefined
    case "undefined": return value.isUndefined
    case "none": if case .none = value { return true } else { return false }
    case "string": if case .string = value { return true } else { return false }
    case "mapping": if case .dict = value { return true } else { return false }
    case "iterable", "sequence":
      switch value {
      case .undefined, .string, .array, .dict: return true
      default: return false
      }
    case "number": return value.numeric != nil
    case "integer": if case .int = value { return true } else { return false }
    case "float": if case .double = value { return true } else { return false }
    case "boolean": if case .bool = value { return true } else { return false }
    case "true": if case .bool(true) = value { return true } else { return false }
    case "false": if case .bool(false) = value { return true } else { return false }
    case "equalto", "eq", "==": return value.pythonEquals(other, budget)
    case "ne", "!=": return !value.pythonEquals(other, budget)
    case "sameas":
      switch (value, other) {
      case (.none, .none): return true
      case (.bool(let a), .bool(let b)): return a == b
      case (.namespace(let a), .namespace(let b)): return a === b
      default: return false
      }
    case "odd", "even", "divisibleby":
      guard case .int(let number) = value else {
        throw JinjaError(kind: .runtime, message: "\(name) expects an integer", line: line)
      }
      if name == "divisibleby" {
        guard case .int(let divisor) = other, divisor != 0 else {
          throw JinjaError(kind: .runtime, message: "divisibleby expects a non-zero integer", line: line)
        }
        // Int.min % -1 traps in Swift; every integer is divisible by -1.
        return divisor == -1 || number % divisor == 0
      }
      return (number % 2 != 0) == (name == "odd")
    case "in": return try JinjaOperators.contains(other, value, line: line, budget)
    case "callable": if case .callable = value { return true } else { return false }
    case "lower", "upper":
      let text = value.pythonString(budget)
      try budget.allocate(text.utf8.count, line)
      return text == (name == "lower" ? text.lowercased() : text.uppercased())
    case "gt", "greaterthan": return try JinjaOperators.compare(">", value, other, line: line, budget)
    case "lt", "lessthan": return try JinjaOperators.compare("<", value, other, line: line, budget)
    case "ge": return try JinjaOperators.compare(">=", value, other, line: line, budget)
    case "le": return try JinjaOperators.compare("<=", value, other, line: line, budget)
    default: throw JinjaError(kind: .unsupported, message: "no test named '\(name)'", line: line)
    }
  }
}
