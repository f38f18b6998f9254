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

  /// `value | name(arguments)`. A filter reads its string input once at
  /// least, and what it makes is charged to the render's budget.
  static func apply(
    _ name: String, _ value: JinjaValue, _ arguments: JinjaArguments, line: Int, _ interpreter: JinjaInterpreter
  ) throws(JinjaError) -> JinjaValue {
    let budget = interpreter.budget
    try budget.step(line)
    if case .string(let text) = value, !budget.spend(scanning: text.utf8.count) { try budget.stop() }
    let result = try filter(name, value, arguments, line: line, interpreter)
    switch result {
    case .string(let made): try budget.allocate(made.utf8.count, line)
    case .array(let items): try budget.allocate(elements: items.count, line)
    default: break
    }
    return result
  }

  private static func filter(
    _ name: String, _ value: JinjaValue, _ arguments: JinjaArguments, line: Int, _ interpreter: JinjaInterpreter
  ) throws(JinjaError) -> JinjaValue {
    let budget = interpreter.budget
    func argument(_ index: Int, _ key: String) -> JinjaValue? { arguments.value(index, key) }
    switch name {
    case "tojson":
      return .string(try JinjaJSON.dump(value, arguments: arguments, line: line, budget))
    case "length", "count":
      switch value {
      case .undefined: return .int(0)
      case .string(let text): return .int(text.unicodeScalars.count)
      case .array(let items): return .int(items.count)
      case .dict(let dict): return .int(dict.keys.count)
      default: throw JinjaError(kind: .runtime, message: "object of type '\(value.typeName)' has no len()", line: line)
      }
    case "trim":
      return .string(
        JinjaMethods.strip(value.pythonString(budget), argument(0, "chars"), leading: true, trailing: true))
    case "string", "safe", "escape", "e":
      if name == "safe" { return value }
      let text = value.pythonString(budget)
      if name == "string" { return .string(text) }
      try budget.allocate(6 * text.utf8.count, line)
      return .string(escapeHTML(text))
    case "default", "d":
      let useFalsy = argument(1, "boolean")?.truthy ?? false
      if value.isUndefined || (useFalsy && !value.truthy) { return argument(0, "default_value") ?? .string("") }
      return value
    case "join":
      var items = try value.iterated(line: line, budget)
      if let attribute = argument(1, "attribute") {
        items = try items.map { item throws(JinjaError) in try path(item, attribute, line: line, budget) }
      }
      let separator = argument(0, "d")?.pythonString(budget) ?? ""
      let parts = items.map { $0.pythonString(budget) }
      try budget.allocate(joining: parts, separator: separator, line)
      return .string(parts.joined(separator: separator))
    case "items":
      switch value {
      case .undefined: return .array([])
      case .dict(let dict):
        try budget.allocate(elements: 3 * dict.keys.count, line)
        return .array(dict.items)
      default: throw JinjaError(kind: .runtime, message: "items filter expects a mapping", line: line)
      }
    case "dictsort":
      guard case .dict(let dict) = value else {
        throw JinjaError(kind: .runtime, message: "dictsort expects a mapping", line: line)
      }
      let byValue = argument(1, "by")?.pythonString(budget) == "value"
      let caseSensitive = argument(0, "case_sensitive")?.truthy ?? false
      try budget.allocate(elements: 3 * dict.keys.count, line)
      var pairs = dict.items
      pairs = try sorted(pairs, line: line, budget) { pair in
        guard case .array(let two) = pair else { return pair }
        let key = two[byValue ? 1 : 0]
        if !caseSensitive, case .string(let text) = key { return .string(text.lowercased()) }
        return key
      }
      return .array((argument(2, "reverse")?.truthy ?? false) ? pairs.reversed() : pairs)
    case "list":
      return .array(try value.iterated(line: line, budget))
    case "selectattr", "rejectattr", "select", "reject":
      // jinja2 skips a falsy sequence (`none | selectattr(...)` is empty).
      guard value.truthy else { return .array([]) }
      let byAttribute = name.hasSuffix("attr")
      let offset = byAttribute ? 1 : 0
      var kept: [JinjaValue] = []
      for item in try value.iterated(line: line, budget) {
        try budget.step(line)
        let subject = byAttribute ? try path(item, argument(0, "attribute") ?? .none, line: line, budget) : item
        let passed: Bool
        if let test = arguments.positional.dropFirst(offset).first {
          let rest = JinjaArguments(positional: Array(arguments.positional.dropFirst(offset + 1)))
          passed = try JinjaTests.apply(test.pythonString(budget), subject, rest, line: line, budget)
        } else {
          passed = subject.truthy
        }
        if passed == name.hasPrefix("select") { kept.append(item) }
      }
      return .array(kept)
    case "map":
      guard value.truthy else { return .array([]) }
      let items = try value.iterated(line: line, budget)
      if let attribute = arguments.keyword.first(where: { $0.0 == "attribute" })?.1 {
        let fallback = arguments.keyword.first { $0.0 == "default" }?.1
        return .array(
          try items.map { item throws(JinjaError) in
            try budget.step(line)
            let found = try path(item, attribute, line: line, budget)
            return found.isUndefined ? (fallback ?? found) : found
          })
      }
      guard let filter = arguments.positional.first?.pythonString(budget), names.contains(filter) else {
        throw JinjaError(kind: .unsupported, message: "map needs a known filter or attribute=", line: line)
      }
      let rest = JinjaArguments(positional: Array(arguments.positional.dropFirst()), keyword: arguments.keyword)
      return .array(
        try items.map { item throws(JinjaError) in try apply(filter, item, rest, line: line, interpreter) })
    case "replace":
      var count = -1
      if case .int(let number)? = argument(2, "count") { count = number }
      let replaced = JinjaMethods.replace(
        value.pythonString(budget), argument(0, "old")?.pythonString(budget) ?? "",
        argument(1, "new")?.pythonString(budget) ?? "", count: count, budget)
      try budget.check()
      return .string(replaced)
    case "indent":
      return .string(try indent(value.pythonString(budget), arguments, line: line, budget))
    case "upper", "lower", "capitalize", "title":
      let text = value.pythonString(budget)
      // Case mapping can lengthen a character (ß -> SS): at most threefold.
      try budget.allocate(3 * text.utf8.count, line)
      switch name {
      case "upper": return .string(text.uppercased())
      case "lower": return .string(text.lowercased())
      case "capitalize": return .string(capitalize(text))
      default: return .string(title(text))
      }
    default:
      return try JinjaFilters.applyCollection(name, value, arguments, line: line, budget)
    }
  }

  /// `item.a.b` for selectattr/map/join's dotted attribute names (or an index).
  static func path(_ item: JinjaValue, _ attribute: JinjaValue, line: Int, _ budget: JinjaBudget) throws(JinjaError)
    -> JinjaValue
  {
    if case .int = attribute { return try JinjaAccess.item(item, attribute, line: line, budget) }
    var current = item
    for part in attribute.pythonString(budget).split(separator: ".") {
      if current.isUndefined { return current }
      current = try JinjaAccess.item(current, Int(part).map { .int($0) } ?? .string(String(part)), line: line, budget)
    }
    return current
  }

  /// Sorted by `key`, each comparison charged to `budget` (a spent budget
  /// makes the order arbitrary; the render then fails).
  static func sorted(_ items: [JinjaValue], line: Int, _ budget: JinjaBudget, key: (JinjaValue) -> JinjaValue)
    throws(JinjaError) -> [JinjaValue]
  {
    var failure: JinjaError?
    let result = items.sorted { a, b in
      guard budget.failure == nil else { return false }
      guard let less = key(a).pythonLess(key(b), budget) else {
        failure = JinjaError(kind: .runtime, message: "values cannot be ordered", line: line)
        return false
      }
      return less
    }
    if let failure { throw failure }
    try budget.check()
    return result
  }

  private static func indent(_ text: String, _ arguments: JinjaArguments, line: Int, _ budget: JinjaBudget)
    throws(JinjaError) -> String
  {
    let indention: String
    switch arguments.value(0, "width") {
    case .string(let custom)?: indention = custom
    case .int(let width)?:
      try budget.allocate(width, line)
      indention = String(repeating: " ", count: max(0, width))
    default: indention = "    "
    }
    let lines = (text + "\n").split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
      .dropLast().map(String.init)
    // Charged before the text is made: a long indention times many lines.
    try budget.allocate(
      indention.utf8.count.multipliedClamped(by: lines.count + 1).addingClamped(text.utf8.count), line)
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
