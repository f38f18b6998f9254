/// The str, dict and list methods templates call, bound to their value.
/// Methods that would change a value are refused, as transformers'
/// immutable sandbox refuses them.
package enum JinjaMethods {
  private static let mutating: Set<String> = [
    "append", "pop", "extend", "insert", "remove", "clear", "update", "setdefault", "popitem", "sort", "reverse",
  ]

  static func method(_ base: JinjaValue, _ name: String, _ budget: JinjaBudget) -> JinjaValue? {
    let body: ((JinjaArguments, Int) throws(JinjaError) -> JinjaValue)?
    switch base {
    case .string(let text):
      if let method = stringMethod(text, name, budget) {
        body = charged(method, reading: text, budget)
      } else {
        body = nil
      }
    case .dict(let dict): body = dictMethod(dict, name, budget)
    case .array:
      body =
        mutating.contains(name)
        ? { _, line throws(JinjaError) in
          throw JinjaError(
            kind: .runtime, message: "access to attribute '\(name)' of 'list' object is unsafe", line: line)
        } : nil
    default: body = nil
    }
    guard let body else { return nil }
    return .callable(JinjaCallable(name: name, call: body))
  }

  /// A string method that charges the string it reads (once at least) and what it makes.
  private static func charged(
    _ method: @escaping (JinjaArguments, Int) throws(JinjaError) -> JinjaValue, reading text: String,
    _ budget: JinjaBudget
  ) -> (JinjaArguments, Int) throws(JinjaError) -> JinjaValue {
    { arguments, line throws(JinjaError) in
      guard budget.spend(scanning: text.utf8.count) else { try budget.stop() }
      let result = try method(arguments, line)
      switch result {
      case .string(let made): try budget.allocate(made.utf8.count, line)
      case .array(let items): try budget.allocate(elements: items.count, line)
      default: break
      }
      return result
    }
  }

  private static func dictMethod(_ dict: JinjaDict, _ name: String, _ budget: JinjaBudget) -> (
    (JinjaArguments, Int) throws(JinjaError) -> JinjaValue
  )? {
    switch name {
    case "get":
      return { arguments, _ in
        guard let key = arguments.value(0, "key") else { return arguments.value(1, "default") ?? .none }
        return dict[JinjaDict.storageKey(key, budget)] ?? arguments.value(1, "default") ?? .none
      }
    case "items", "keys", "values":
      return { _, line throws(JinjaError) in
        try budget.allocate(elements: 3 * dict.keys.count, line)
        switch name {
        case "items": return .array(dict.items)
        case "keys": return .array(dict.keys.map { dict.keyValue($0) })
        default: return .array(dict.pairs.map(\.1))
        }
      }
    default:
      guard mutating.contains(name) else { return nil }
      return { _, line throws(JinjaError) in
        throw JinjaError(
          kind: .runtime, message: "access to attribute '\(name)' of 'dict' object is unsafe", line: line)
      }
    }
  }

  static func isPythonSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.isWhitespace || (0x1C...0x1F).contains(scalar.value)
  }

  /// `str.strip` and friends: `chars` or whitespace, from either end.
  package static func strip(_ text: String, _ chars: JinjaValue?, leading: Bool, trailing: Bool) -> String {
    let set: ((Unicode.Scalar) -> Bool)
    if case .string(let chars)? = chars {
      let scalars = Set(chars.unicodeScalars)
      set = { scalars.contains($0) }
    } else {
      set = isPythonSpace
    }
    var scalars = Substring(text).unicodeScalars[...]
    if leading { while let first = scalars.first, set(first) { scalars.removeFirst() } }
    if trailing { while let last = scalars.last, set(last) { scalars.removeLast() } }
    return String(String.UnicodeScalarView(scalars))
  }

  static func split(_ text: String, _ separator: JinjaValue?, _ limit: JinjaValue?) -> [String] {
    var maxSplits = -1
    if case .int(let number)? = limit { maxSplits = number }
    guard case .string(let separator)? = separator, !separator.isEmpty else {
      var parts: [String] = []
      var current = String.UnicodeScalarView()
      var rest = Substring(text).unicodeScalars[...]
      while let scalar = rest.first {
        if isPythonSpace(scalar) {
          if !current.isEmpty {
            parts.append(String(current))
            current = String.UnicodeScalarView()
            if maxSplits >= 0, parts.count == maxSplits {
              let remainder = String(String.UnicodeScalarView(rest)).trimmingPrefix {
                $0.unicodeScalars.allSatisfy(isPythonSpace)
              }
              if !remainder.isEmpty { parts.append(String(remainder)) }
              return parts
            }
          }
        } else {
          current.append(scalar)
        }
        rest.removeFirst()
      }
      if !current.isEmpty { parts.append(String(current)) }
      return parts
    }
    var parts: [String] = []
    var rest = Substring(text)
    while maxSplits < 0 || parts.count < maxSplits, let range = rest.range(of: separator) {
      parts.append(String(rest[..<range.lowerBound]))
      rest = rest[range.upperBound...]
    }
    parts.append(String(rest))
    return parts
  }

  private static func stringMethod(_ text: String, _ name: String, _ budget: JinjaBudget) -> (
    (JinjaArguments, Int) throws(JinjaError) -> JinjaValue
  )? {
    switch name {
    case "strip", "lstrip", "rstrip":
      return { arguments, _ in
        .string(strip(text, arguments.value(0, "chars"), leading: name != "rstrip", trailing: name != "lstrip"))
      }
    case "split":
      return { arguments, line throws(JinjaError) in
        if case .string(let separator)? = arguments.value(0, "sep"),
          !budget.spend(searching: separator.utf8.count, in: text.utf8.count)
        {
          try budget.stop()
        }
        try budget.allocate(elements: text.utf8.count / 2 + 1, line)
        return .array(split(text, arguments.value(0, "sep"), arguments.value(1, "maxsplit")).map { .string($0) })
      }
    case "startswith", "endswith":
      return { arguments, line throws(JinjaError) in
        let candidates: [JinjaValue]
        switch arguments.value(0, "prefix") {
        case .array(let items)?: candidates = items
        case let value?: candidates = [value]
        case nil: throw JinjaError(kind: .runtime, message: "\(name)() takes an argument", line: line)
        }
        return .bool(
          candidates.contains { candidate in
            guard case .string(let affix) = candidate, budget.spend(scanning: affix.utf8.count) else { return false }
            return name == "startswith"
              ? text.unicodeScalars.starts(with: affix.unicodeScalars)
              : text.unicodeScalars.reversed().starts(with: affix.unicodeScalars.reversed())
          })
      }
    case "replace":
      return { arguments, _ throws(JinjaError) in
        let old = arguments.value(0, "old")?.pythonString(budget) ?? ""
        let new = arguments.value(1, "new")?.pythonString(budget) ?? ""
        var count = -1
        if case .int(let number)? = arguments.value(2, "count") { count = number }
        let replaced = replace(text, old, new, count: count, budget)
        try budget.check()
        return .string(replaced)
      }
    case "upper": return { _, _ in .string(text.uppercased()) }
    case "lower": return { _, _ in .string(text.lowercased()) }
    case "title": return { _, _ in .string(JinjaFilters.title(text)) }
    case "capitalize": return { _, _ in .string(JinjaFilters.capitalize(text)) }
    case "find":
      return { arguments, _ throws(JinjaError) in
        let needle = arguments.value(0, "sub")?.pythonString(budget) ?? ""
        guard budget.spend(searching: needle.utf8.count, in: text.utf8.count) else { try budget.stop() }
        guard let range = text.range(of: needle) else { return .int(-1) }
        return .int(text.unicodeScalars.distance(from: text.startIndex, to: range.lowerBound))
      }
    case "count":
      return { arguments, _ throws(JinjaError) in
        let needle = arguments.value(0, "sub")?.pythonString(budget) ?? ""
        guard budget.spend(searching: needle.utf8.count, in: text.utf8.count) else { try budget.stop() }
        return .int(needle.isEmpty ? text.unicodeScalars.count + 1 : split(text, .string(needle), nil).count - 1)
      }
    case "join":
      return { arguments, line throws(JinjaError) in
        let parts = try (arguments.value(0, "iterable") ?? .array([])).iterated(line: line, budget).map {
          $0.pythonString(budget)
        }
        try budget.allocate(joining: parts, separator: text, line)
        return .string(parts.joined(separator: text))
      }
    case "splitlines":
      return { _, _ in
        .array(
          text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map { .string(String($0)) }
            .dropLast(text.hasSuffix("\n") ? 1 : 0))
      }
    case "isdigit":
      return { _, _ in .bool(!text.isEmpty && text.unicodeScalars.allSatisfy { $0.properties.numericType != nil }) }
    case "isspace": return { _, _ in .bool(!text.isEmpty && text.unicodeScalars.allSatisfy(isPythonSpace)) }
    case "format":
      return { arguments, line throws(JinjaError) in .string(try format(text, arguments, line: line, budget)) }
    default: return nil
    }
  }

  /// `str.replace`; each replacement is charged to `budget`, and the text
  /// stops short once it is spent (the caller then throws).
  static func replace(_ text: String, _ old: String, _ new: String, count: Int, _ budget: JinjaBudget) -> String {
    guard !old.isEmpty, budget.spend(searching: old.utf8.count, in: text.utf8.count) else { return text }
    var out = ""
    var rest = Substring(text)
    var done = 0
    while count < 0 || done < count, budget.spend(allocating: new.utf8.count), let range = rest.range(of: old) {
      out += rest[..<range.lowerBound]
      out += new
      rest = rest[range.upperBound...]
      done += 1
    }
    return out + rest
  }

  /// `"{} {name}".format(...)`: positional and named fields, no format specs.
  private static func format(_ text: String, _ arguments: JinjaArguments, line: Int, _ budget: JinjaBudget)
    throws(JinjaError) -> String
  {
    var out = ""
    var automatic = 0
    var iterator = text.makeIterator()
    while let character = iterator.next() {
      if character == "}" {
        _ = iterator.next()
        out.append("}")
        continue
      }
      guard character == "{" else {
        out.append(character)
        continue
      }
      var field = ""
      while let next = iterator.next(), next != "}" {
        if next == "{", field.isEmpty {
          field = "{"
          break
        }
        field.append(next)
      }
      if field == "{" {
        out.append("{")
        continue
      }
      if field.contains(":") || field.contains("!") {
        throw JinjaError(kind: .unsupported, message: "format specs are unsupported", line: line)
      }
      let value: JinjaValue?
      if field.isEmpty {
        value = automatic < arguments.positional.count ? arguments.positional[automatic] : nil
        automatic += 1
      } else if let index = Int(field) {
        // `{-1}` is a negative index, which Python refuses too.
        value = arguments.positional.indices.contains(index) ? arguments.positional[index] : nil
      } else {
        value = arguments.keyword.first { $0.0 == field }?.1
      }
      guard let value else { throw JinjaError(kind: .runtime, message: "format: missing argument", line: line) }
      let piece = value.pythonString(budget)
      try budget.allocate(piece.utf8.count, line)
      out += piece
    }
    return out
  }
}
