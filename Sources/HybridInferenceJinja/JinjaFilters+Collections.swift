import Foundation

/// Filters on numbers and collections: `first`, `last`, `sort`, `unique`, `int`, ...
extension JinjaFilters {
  static func applyCollection(
    _ name: String, _ value: JinjaValue, _ arguments: JinjaArguments, line: Int, _ budget: JinjaBudget
  ) throws(JinjaError) -> JinjaValue {
    switch name {
    case "first", "last":
      let items = try value.iterated(line: line, budget)
      return (name == "first" ? items.first : items.last) ?? .undefined(name)
    case "reverse":
      if case .string(let text) = value {
        return .string(String(String.UnicodeScalarView(text.unicodeScalars.reversed())))
      }
      return .array(try value.iterated(line: line, budget).reversed())
    case "unique":
      var kept: [JinjaValue] = []
      for item in try value.iterated(line: line, budget) where !kept.contains(where: { $0.pythonEquals(item, budget) })
      {
        kept.append(item)
      }
      return .array(kept)
    case "sort", "min", "max":
      let attribute = arguments.keyword.first { $0.0 == "attribute" }?.1
      let caseSensitive = arguments.keyword.first { $0.0 == "case_sensitive" }?.1.truthy ?? false
      var keyFailure: JinjaError?
      let items = try sorted(try value.iterated(line: line, budget), line: line, budget) { item in
        var key = item
        if let attribute {
          do throws(JinjaError) { key = try path(item, attribute, line: line, budget) } catch { keyFailure = error }
        }
        if !caseSensitive, case .string(let text) = key { return .string(text.lowercased()) }
        return key
      }
      if let keyFailure { throw keyFailure }
      if name == "min" { return items.first ?? .undefined("min") }
      if name == "max" { return items.last ?? .undefined("max") }
      let reverse = arguments.value(0, "reverse")?.truthy ?? false
      return .array(reverse ? items.reversed() : items)
    case "int":
      switch value {
      case .int: return value
      case .bool(let flag): return .int(flag ? 1 : 0)
      case .double(let number): return try integer(number, arguments, line: line)
      case .string(let text):
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Int(trimmed) { return .int(number) }
        if let number = Double(trimmed) { return try integer(number, arguments, line: line) }
        return arguments.value(0, "default") ?? .int(0)
      default: return arguments.value(0, "default") ?? .int(0)
      }
    case "float":
      if let number = value.numeric { return .double(number) }
      if case .string(let text) = value, let number = Double(text.trimmingCharacters(in: .whitespaces)) {
        return .double(number)
      }
      return arguments.value(0, "default") ?? .double(0)
    case "abs":
      switch value {
      case .int(let number):
        guard number != .min else { throw JinjaError(kind: .runtime, message: "integer overflow in abs()", line: line) }
        return .int(abs(number))
      case .double(let number): return .double(abs(number))
      default: throw JinjaError(kind: .runtime, message: "bad operand type for abs()", line: line)
      }
    case "round":
      guard let number = value.numeric else {
        throw JinjaError(kind: .runtime, message: "round expects a number", line: line)
      }
      var precision = 0
      if case .int(let digits)? = arguments.value(0, "precision") { precision = digits }
      let scale = pow(10, Double(precision))
      return .double((number * scale).rounded(.toNearestOrEven) / scale)
    case "sum":
      var total: JinjaValue = arguments.value(1, "start") ?? .int(0)
      for item in try value.iterated(line: line, budget) {
        let term =
          try arguments.value(0, "attribute").map { a throws(JinjaError) in try path(item, a, line: line, budget) }
          ?? item
        total = try JinjaOperators.binary("+", total, term, line: line, budget)
      }
      return total
    case "wordcount":
      return .int(JinjaMethods.split(value.pythonString(budget), nil, nil).count)
    case "batch":
      guard case .int(let size)? = arguments.value(0, "linecount"), size > 0 else {
        throw JinjaError(kind: .runtime, message: "batch needs a positive size", line: line)
      }
      let items = try value.iterated(line: line, budget)
      try budget.allocate(elements: 2 * items.count, line)
      // `size` may be near Int.max: the end is found without adding it to the start.
      return .array(
        stride(from: 0, to: items.count, by: size).map { .array(Array(items[$0..<($0 + min(size, items.count - $0))])) }
      )
    default:
      throw JinjaError(kind: .unsupported, message: "no filter named '\(name)'", line: line)
    }
  }

  /// `int(number)` for a float: NaN is not a number (the default, as jinja2's
  /// ValueError gives); infinity or a float past 64 bits is a template error,
  /// never `Int(_:)`'s trap.
  private static func integer(_ number: Double, _ arguments: JinjaArguments, line: Int) throws(JinjaError)
    -> JinjaValue
  {
    if number.isNaN { return arguments.value(0, "default") ?? .int(0) }
    guard let integer = Int(exactly: number.rounded(.towardZero)) else {
      throw JinjaError(kind: .runtime, message: "int(): \(number) is not a 64-bit integer", line: line)
    }
    return .int(integer)
  }
}
