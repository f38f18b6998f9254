import Foundation

/// Filters on numbers and collections: `first`, `last`, `sort`, `unique`, `int`, ...
extension JinjaFilters {
  static func applyCollection(_ name: String, _ value: JinjaValue, _ arguments: JinjaArguments, line: Int)
    throws(JinjaError) -> JinjaValue
  {
    switch name {
    case "first", "last":
      let items = try value.iterated(line: line)
      return (name == "first" ? items.first : items.last) ?? .undefined(name)
    case "reverse":
      if case .string(let text) = value {
        return .string(String(String.UnicodeScalarView(text.unicodeScalars.reversed())))
      }
      return .array(try value.iterated(line: line).reversed())
    case "unique":
      var kept: [JinjaValue] = []
      for item in try value.iterated(line: line) where !kept.contains(where: { $0.pythonEquals(item) }) {
        kept.append(item)
      }
      return .array(kept)
    case "sort", "min", "max":
      let attribute = arguments.keyword.first { $0.0 == "attribute" }?.1
      let caseSensitive = arguments.keyword.first { $0.0 == "case_sensitive" }?.1.truthy ?? false
      var keyFailure: JinjaError?
      let items = try sorted(try value.iterated(line: line), line: line) { item in
        var key = item
        if let attribute {
          do throws(JinjaError) { key = try path(item, attribute, line: line) } catch { keyFailure = error }
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
      case .double(let number): return .int(Int(number))
      case .string(let text):
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Int(trimmed) { return .int(number) }
        if let number = Double(trimmed) { return .int(Int(number)) }
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
      case .int(let number): return .int(abs(number))
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
      for item in try value.iterated(line: line) {
        let term =
          try arguments.value(0, "attribute").map { a throws(JinjaError) in try path(item, a, line: line) } ?? item
        total = try JinjaOperators.binary("+", total, term, line: line)
      }
      return total
    case "wordcount":
      return .int(JinjaMethods.split(value.pythonString, nil, nil).count)
    case "batch":
      guard case .int(let size)? = arguments.value(0, "linecount"), size > 0 else {
        throw JinjaError(kind: .runtime, message: "batch needs a positive size", line: line)
      }
      let items = try value.iterated(line: line)
      return .array(
        stride(from: 0, to: items.count, by: size).map { .array(Array(items[$0..<min($0 + size, items.count)])) })
    default:
      throw JinjaError(kind: .unsupported, message: "no filter named '\(name)'", line: line)
    }
  }
}
