import Foundation

/// The filters chat templates use, as jinja2 3.1 defines them, with `tojson`
/// as transformers overrides it (plain `json.dumps`, no HTML escaping).
enum JinjaFilters {
  static let names: Set<String> = [
    "tojson", "length", "count", "trim", "string", "default", "d", "join", "items", "upper", "lower", "safe",
    "dictsort", "list", "selectattr", "rejectattr", "select", "reject", "map", "replace", "indent", "int", "float",
    "unique", "sort", "min", "max", "first", "last", "abs", "capitalize", "title", "round", "sum", "reverse",
    "escape", "e", "wordcount", "batch",
  ]

  static func apply(
    _ name: String, _ value: JinjaValue, _ arguments: JinjaArguments, line: Int, _ interpreter: JinjaInterpreter
  ) throws(JinjaError) -> JinjaValue {
    func argument(_ index: Int, _ key: String) -> JinjaValue? { arguments.value(index, key) }
    switch name {
    case "tojson":
      return .string(try JinjaJSON.dump(value, arguments: arguments, line: line))
    case "length", "count":
      switch value {
      case .undefined: return .int(0)
      case .string(let text): return .int(text.unicodeScalars.count)
      case .array(let items): return .int(items.count)
      case .dict(let dict): return .int(dict.keys.count)
      default: throw JinjaError(kind: .runtime, message: "object of type '\(value.typeName)' has no len()", line: line)
      }
    case "trim":
      return .string(JinjaMethods.strip(value.pythonString, argument(0, "chars"), leading: true, trailing: true))
    case "string", "safe", "escape", "e":
      if name == "safe" { return value }
      if name == "string" { return .string(value.pythonString) }
      return .string(escapeHTML(value.pythonString))
    case "default", "d":
      let useFalsy = argument(1, "boolean")?.truthy ?? false
      if value.isUndefined || (useFalsy && !value.truthy) { return argument(0, "default_value") ?? .string("") }
      return value
    case "join":
      var items = try value.iterated(line: line)
      if let attribute = argument(1, "attribute") {
        items = try items.map { item throws(JinjaError) in try path(item, attribute, line: line) }
      }
      return .string(items.map(\.pythonString).joined(separator: argument(0, "d")?.pythonString ?? ""))
    case "items":
      switch value {
      case .undefined: return .array([])
      case .dict(let dict): return .array(dict.items)
      default: throw JinjaError(kind: .runtime, message: "items filter expects a mapping", line: line)
      }
    case "dictsort":
      guard case .dict(let dict) = value else {
        throw JinjaError(kind: .runtime, message: "dictsort expects a mapping", line: line)
      }
      let byValue = argument(1, "by")?.pythonString == "value"
      let caseSensitive = argument(0, "case_sensitive")?.truthy ?? false
      var pairs = dict.items
      pairs = try sorted(pairs, line: line) { pair in
        guard case .array(let two) = pair else { return pair }
        let key = two[byValue ? 1 : 0]
        if !caseSensitive, case .string(let text) = key { return .string(text.lowercased()) }
        return key
      }
      return .array((argument(2, "reverse")?.truthy ?? false) ? pairs.reversed() : pairs)
    case "list":
      return .array(try value.iterated(line: line))
    case "selectattr", "rejectattr", "select", "reject":
      // jinja2 skips a falsy sequence (`none | selectattr(...)` is empty).
      guard value.truthy else { return .array([]) }
      let byAttribute = name.hasSuffix("attr")
      let offset = byAttribute ? 1 : 0
      var kept: [JinjaValue] = []
      for item in try value.iterated(line: line) {
        let subject = byAttribute ? try path(item, argument(0, "attribute") ?? .none, line: line) : item
        let passed: Bool
        if let test = arguments.positional.dropFirst(offset).first {
          let rest = JinjaArguments(positional: Array(arguments.positional.dropFirst(offset + 1)))
          passed = try JinjaTests.apply(test.pythonString, subject, rest, line: line)
        } else {
          passed = subject.truthy
        }
        if passed == name.hasPrefix("select") { kept.append(item) }
      }
      return .array(kept)
    case "map":
      guard value.truthy else { return .array([]) }
      let items = try value.iterated(line: line)
      if let attribute = arguments.keyword.first(where: { $0.0 == "attribute" })?.1 {
        let fallback = arguments.keyword.first { $0.0 == "default" }?.1
        return .array(
          try items.map { item throws(JinjaError) in
            let found = try path(item, attribute, line: line)
            return found.isUndefined ? (fallback ?? found) : found
          })
      }
      guard let filter = arguments.positional.first?.pythonString, names.contains(filter) else {
        throw JinjaError(kind: .unsupported, message: "map needs a known filter or attribute=", line: line)
      }
      let rest = JinjaArguments(positional: Array(arguments.positional.dropFirst()), keyword: arguments.keyword)
      return .array(
        try items.map { item throws(JinjaError) in try apply(filter, item, rest, line: line, interpreter) })
    case "replace":
      var count = -1
      if case .int(let number)? = argument(2, "count") { count = number }
      return .string(
        JinjaMethods.replace(
          value.pythonString, argument(0, "old")?.pythonString ?? "", argument(1, "new")?.pythonString ?? "",
          count: count))
    case "indent":
      return .string(indent(value.pythonString, arguments))
    case "upper": return .string(value.pythonString.uppercased())
    case "lower": return .string(value.pythonString.lowercased())
    case "capitalize": return .string(capitalize(value.pythonString))
    case "title": return .string(title(value.pythonString))
    default:
      return try JinjaFilters.applyCollection(name, value, arguments, line: line)
    }
  }

  /// `item.a.b` for selectattr/map/join's dotted attribute names (or an index).
  static func path(_ item: JinjaValue, _ attribute: JinjaValue, line: Int) throws(JinjaError) -> JinjaValue {
    if case .int = attribute { return try JinjaAccess.item(item, attribute, line: line) }
    var current = item
    for part in attribute.pythonString.split(separator: ".") {
      if current.isUndefined { return current }
      current = try JinjaAccess.item(current, Int(part).map { .int($0) } ?? .string(String(part)), line: line)
    }
    return current
  }

  static func sorted(_ items: [JinjaValue], line: Int, key: (JinjaValue) -> JinjaValue) throws(JinjaError)
    -> [JinjaValue]
  {
    var failure: JinjaError?
    let result = items.sorted { a, b in
      guard let less = key(a).pythonLess(key(b)) else {
        failure = JinjaError(kind: .runtime, message: "values cannot be ordered", line: line)
        return false
      }
      return less
    }
    if let failure { throw failure }
    return result
  }

  private static func indent(_ text: String, _ arguments: JinjaArguments) -> String {
    let indention: String
    switch arguments.value(0, "width") {
    case .string(let custom)?: indention = custom
    case .int(let width)?: indention = String(repeating: " ", count: max(0, width))
    default: indention = "    "
    }
    let lines = (text + "\n").split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
      .dropLast().map(String.init)
    var result: String
    if arguments.value(2, "blank")?.truthy ?? false {
      result = lines.joined(separator: "\n" + indention)
    } else {
      result = lines.first ?? ""
      if lines.count > 1 {
        result += "\n" + lines.dropFirst().map { $0.isEmpty ? $0 : indention + $0 }.joined(separator: "\n")
      }
    }
    if arguments.value(1, "first")?.truthy ?? false { result = indention + result }
    return result
  }

  static func capitalize(_ text: String) -> String {
    guard let first = text.first else { return text }
    return first.uppercased() + text.dropFirst().lowercased()
  }

  static func title(_ text: String) -> String {
    var out = ""
    var previousIsLetter = false
    for character in text {
      out += previousIsLetter ? character.lowercased() : character.uppercased()
      previousIsLetter = character.isLetter || character.isNumber || character == "'"
    }
    return out
  }

  private static func escapeHTML(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&#34;"
      case "'": out += "&#39;"
      default: out.append(character)
      }
    }
    return out
  }
}
