/// `tojson` as transformers defines it: `json.dumps(value, ensure_ascii=False,
/// indent=indent, separators=separators, sort_keys=sort_keys)`, byte for byte
/// (Python's default separators, float repr, non-ASCII kept).
enum JinjaJSON {
  /// Every item written and byte made is charged to `budget`.
  static func dump(_ value: JinjaValue, arguments: JinjaArguments, line: Int, _ budget: JinjaBudget)
    throws(JinjaError) -> String
  {
    var indent: String?
    switch arguments.value(1, "indent") {
    case .int(let width)?:
      try budget.allocate(width, line)
      indent = String(repeating: " ", count: max(0, width))
    case .string(let text)?: indent = text
    default: indent = nil
    }
    var itemSeparator = indent == nil ? ", " : ","
    var keySeparator = ": "
    if case .array(let pair)? = arguments.value(2, "separators"), pair.count == 2 {
      itemSeparator = pair[0].pythonString(budget)
      keySeparator = pair[1].pythonString(budget)
    }
    let sortKeys = arguments.value(3, "sort_keys")?.truthy ?? false
    let ensureASCII = arguments.value(0, "ensure_ascii")?.truthy ?? false
    var out = ""
    try write(
      value, into: &out, level: 0,
      style: Style(indent: indent, item: itemSeparator, key: keySeparator, sortKeys: sortKeys, ascii: ensureASCII),
      line: line, budget)
    try budget.check()
    return out
  }

  private struct Style {
    var indent: String?
    var item: String
    var key: String
    var sortKeys: Bool
    var ascii: Bool
  }

  private static func write(
    _ value: JinjaValue, into out: inout String, level: Int, style: Style, line: Int, _ budget: JinjaBudget
  ) throws(JinjaError) {
    // An item, its separators and its indention; a string's bytes (up to
    // six per byte escaped) before they are written.
    try budget.step(line)
    let indention = (style.indent?.utf8.count ?? 0).multipliedClamped(by: level + 1)
    try budget.allocate(indention.addingClamped(style.item.utf8.count + style.key.utf8.count), line)
    if case .string(let text) = value { try budget.allocate(6 * text.utf8.count, line) }
    switch value {
    case .none: out += "null"
    case .bool(let flag): out += flag ? "true" : "false"
    case .int(let number): out += String(number)
    case .double(let number):
      out +=
        number.isNaN
        ? "NaN" : number.isInfinite ? (number < 0 ? "-Infinity" : "Infinity") : JinjaValue.pythonFloat(number)
    case .string(let text): JSONStringLiteral.append(text, to: &out, asciiOnly: style.ascii)
    case .array(let items):
      guard !items.isEmpty else {
        out += "[]"
        return
      }
      out += "["
      for (index, item) in items.enumerated() {
        if index > 0 { out += style.item }
        newline(&out, level + 1, style)
        try write(item, into: &out, level: level + 1, style: style, line: line, budget)
      }
      newline(&out, level, style)
      out += "]"
    case .dict(let dict):
      guard !dict.keys.isEmpty else {
        out += "{}"
        return
      }
      out += "{"
      let keys =
        style.sortKeys ? dict.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) } : dict.keys
      for (index, key) in keys.enumerated() {
        if index > 0 { out += style.item }
        try budget.allocate(6 * key.utf8.count, line)
        newline(&out, level + 1, style)
        JSONStringLiteral.append(jsonKey(dict.keyValue(key), budget), to: &out, asciiOnly: style.ascii)
        out += style.key
        try write(dict[key] ?? .none, into: &out, level: level + 1, style: style, line: line, budget)
      }
      newline(&out, level, style)
      out += "}"
    case .namespace, .callable, .undefined:
      throw JinjaError(
        kind: .runtime, message: "Object of type \(value.typeName) is not JSON serializable", line: line)
    }
  }

  /// json.dumps turns non-string keys into strings: 1 → "1", True → "true", None → "null".
  private static func jsonKey(_ key: JinjaValue, _ budget: JinjaBudget) -> String {
    switch key {
    case .bool(let flag): flag ? "true" : "false"
    case .none: "null"
    default: key.pythonString(budget)
    }
  }

  private static func newline(_ out: inout String, _ level: Int, _ style: Style) {
    guard let indent = style.indent else { return }
    out += "\n" + String(repeating: indent, count: level)
  }
}
