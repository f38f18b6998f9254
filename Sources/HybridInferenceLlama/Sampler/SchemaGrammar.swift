import HybridInferenceCore

/// Turns a JSON Schema into a GBNF grammar for llama.cpp's grammar sampler,
/// so the device's answer parses by construction.
///
/// Covers what deriving produces and what hand-written schemas commonly use:
/// objects (properties in order, optional ones skippable), arrays with
/// `minItems`/`maxItems`, strings with `enum`/`const`/`minLength`/`maxLength`,
/// integers and numbers in JSON syntax, booleans, null, `anyOf`/`oneOf`,
/// type lists, and `$ref` to `#/$defs/...`. `pattern` is refused with a typed
/// error, so a hybrid sends such a schema to the cloud. Whitespace is one
/// optional space wherever JSON allows it, so a small model cannot loop on
/// spaces; the root has none after it, so the grammar is complete exactly
/// when the value is. Ranges (`minimum`) are not expressible and are checked
/// on the decoded answer instead.
///
/// Lists and strings the schema leaves unbounded are bounded on the device
/// (`defaultMaximumItems`, `defaultMaximumLength`): a small model that loops
/// on a list item would otherwise fill the whole context and never close the
/// value. The answer still satisfies the schema; it is only shorter than the
/// schema would allow.
///
/// `minLength`, `maxLength`, `minItems` and `maxItems` must be non-negative
/// integers (a JSON number with no fraction), with the maximum not below the
/// minimum; anything else is `unsupportedSchema` naming the field's path.
/// The device produces at most `maximumRepetitions` (4,096) items of a list
/// or characters of a string: llama.cpp's grammar parser spells `x{m,n}` out
/// as about `n` rules, so a bound of `1e9` would build a billion rules, and
/// 4,096 is the default context window, which no longer list (an item costs
/// at least a token) could fit anyway. A larger maximum is clamped to it (the
/// answer still satisfies the schema); a larger minimum is
/// `unsupportedSchema`, since no answer the device can give would satisfy
/// it, and a hybrid sends the request to the cloud.
struct SchemaGrammar {
  /// Items of an array without `maxItems`.
  static let defaultMaximumItems = 32
  /// Characters of a string without `maxLength`.
  static let defaultMaximumLength = 256
  /// The most items or characters a bound may ask the device for.
  static let maximumRepetitions = 4096

  private let root: OrderedJSON
  private var rules: [(String, String)] = []
  private var names: Set<String> = []
  private var references: [String: String] = [:]

  /// The grammar text; its start rule is `root`.
  static func gbnf(for schema: GenerationSchema) throws(HybridInferenceError) -> String {
    let (body, rules) = try self.rules(for: schema, prefix: "")
    return ([("root", body)] + rules).map { "\($0.0) ::= \($0.1)" }.joined(separator: "\n") + "\n"
  }

  /// The schema as an expression and the rules it names, for a grammar that
  /// holds several schemas (a tool call's arguments, one per tool): every
  /// rule of its own starts with `prefix`; the primitives (`ws`, `string`,
  /// ...) are shared and identical in every schema's list.
  static func rules(for schema: GenerationSchema, prefix: String) throws(HybridInferenceError) -> (
    expression: String, rules: [(String, String)]
  ) {
    var builder = SchemaGrammar(root: try schema.ordered(), prefix: prefix)
    let body = try builder.expression(for: builder.root, path: "$", depth: 0)
    return (body, builder.rules)
  }

  /// One expression per property of an object schema, for calls whose
  /// arguments are written one by one (`ToolCallPattern.Arguments.tagged`):
  /// its name, its value's expression, whether it is required, and whether
  /// it is a plain string (written as it is, not as JSON).
  static func propertyRules(for schema: GenerationSchema, prefix: String) throws(HybridInferenceError) -> (
    properties: [(name: String, expression: String, isRequired: Bool, isString: Bool)], rules: [(String, String)]
  ) {
    var builder = SchemaGrammar(root: try schema.ordered(), prefix: prefix)
    let required = Set(builder.root["required"]?.array?.compactMap(\.string) ?? [])
    var properties: [(name: String, expression: String, isRequired: Bool, isString: Bool)] = []
    for (name, property) in builder.root["properties"]?.members ?? [] {
      let expression = try builder.expression(for: property, path: "$.\(name)", depth: 1)
      let isString = property["type"]?.string == "string" && property["enum"] == nil && property["const"] == nil
      properties.append((name, expression, required.contains(name), isString))
    }
    return (properties, builder.rules)
  }

  private let prefix: String

  private init(root: OrderedJSON, prefix: String) {
    self.root = root
    self.prefix = prefix
  }

  private static let primitives: [String: String] = [
    "ws": #"" "?"#,
    "char": #"[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})"#,
    "string": #""\"" char* "\"""#,
    "integer": #""-"? ("0" | [1-9] [0-9]{0,15})"#,
    "number": #""-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?"#,
    "boolean": #""true" | "false""#,
    "null": #""null""#,
    "value": "object | array | string | number | boolean | null",
    "object": #""{" ws (string ws ":" ws value ("," ws string ws ":" ws value)*)? ws "}""#,
    "array": #""[" ws (value ("," ws value)*)? ws "]""#,
  ]

  /// A named primitive rule, added once with what it needs.
  private mutating func primitive(_ name: String) -> String {
    let needs: [String: [String]] = [
      "string": ["char"], "value": ["object", "array", "string", "number", "boolean", "null"],
      "object": ["ws", "string", "value"], "array": ["ws", "value"],
    ]
    if !names.contains(name), let body = Self.primitives[name] {
      names.insert(name)
      rules.append((name, body))
      for dependency in needs[name] ?? [] { _ = primitive(dependency) }
    }
    return name
  }

  private mutating func add(_ base: String, _ body: String) -> String {
    var name = base.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
    if name.isEmpty || !(name.first?.isLetter ?? false) { name = "r-" + name }
    name = prefix + name
    var unique = name
    var counter = 1
    while names.contains(unique) || Self.primitives[unique] != nil {
      counter += 1
      unique = "\(name)-\(counter)"
    }
    names.insert(unique)
    rules.append((unique, body))
    return unique
  }

  private mutating func expression(
    for schema: OrderedJSON, path: String, depth: Int
  ) throws(HybridInferenceError) -> String {
    guard depth < 64 else { throw .unsupportedSchema(path: path, reason: "the schema nests too deeply") }
    if case .bool(true) = schema { return primitive("value") }
    guard let members = schema.members else {
      throw .unsupportedSchema(path: path, reason: "a schema must be an object or true")
    }
    if let reference = schema["$ref"]?.string { return try referenced(reference, path: path, depth: depth) }
    if let choices = (schema["anyOf"] ?? schema["oneOf"])?.array {
      var alternatives: [String] = []
      for (index, choice) in choices.enumerated() {
        alternatives.append(try expression(for: choice, path: "\(path).anyOf[\(index)]", depth: depth + 1))
      }
      return "(" + alternatives.joined(separator: " | ") + ")"
    }
    if let constant = schema["const"] { return Self.literal(constant.jsonText) }
    if let options = schema["enum"]?.array {
      return "(" + options.map { Self.literal($0.jsonText) }.joined(separator: " | ") + ")"
    }
    if schema["pattern"] != nil {
      throw .unsupportedSchema(path: path, reason: "pattern is not supported on device")
    }
    switch schema["type"] {
    case .array(let types)?:
      var alternatives: [String] = []
      for type in types {
        guard let name = type.string else { throw .unsupportedSchema(path: path, reason: "a type must be a string") }
        alternatives.append(try typed(name, schema, path: path, depth: depth))
      }
      return "(" + alternatives.joined(separator: " | ") + ")"
    case .string(let name)?:
      return try typed(name, schema, path: path, depth: depth)
    default:
      if members.contains(where: { $0.0 == "properties" }) {
        return try typed("object", schema, path: path, depth: depth)
      }
      if schema["items"] != nil { return try typed("array", schema, path: path, depth: depth) }
      return primitive("value")
    }
  }

  private mutating func typed(
    _ type: String, _ schema: OrderedJSON, path: String, depth: Int
  ) throws(HybridInferenceError) -> String {
    switch type {
    case "string":
      let (least, most) = try Self.bounds(
        schema, "minLength", "maxLength", default: Self.defaultMaximumLength, path: path)
      _ = primitive("char")  // the rule the repetition names must be defined
      return #""\"" char{\#(least),\#(most)} "\"""#
    case "integer", "number", "boolean", "null": return primitive(type)
    case "array": return try array(schema, path: path, depth: depth)
    case "object": return try object(schema, path: path, depth: depth)
    default: throw .unsupportedSchema(path: path, reason: "unknown type \(type)")
    }
  }

  private mutating func array(_ schema: OrderedJSON, path: String, depth: Int) throws(HybridInferenceError) -> String {
    let item = try expression(for: schema["items"] ?? .bool(true), path: path + "[]", depth: depth + 1)
    let itemRule = add(Self.ruleName(path) + "-item", item)
    let ws = primitive("ws")
    let (least, most) = try Self.bounds(schema, "minItems", "maxItems", default: Self.defaultMaximumItems, path: path)
    if most == 0 { return #""[" \#(ws) "]""# }
    let more = "(\",\" \(ws) \(itemRule))"
    let repeatBound = "{\(max(0, least - 1)),\(most - 1)}"
    let items = "\(itemRule) \(more)\(repeatBound)"
    return #""[" \#(ws) "# + (least == 0 ? "(\(items))?" : items) + #" \#(ws) "]""#
  }

  private mutating func object(_ schema: OrderedJSON, path: String, depth: Int) throws(HybridInferenceError) -> String {
    let ws = primitive("ws")
    let properties = schema["properties"]?.members ?? []
    guard !properties.isEmpty else {
      if case .bool(false)? = schema["additionalProperties"] { return #""{" \#(ws) "}""# }
      return primitive("object")
    }
    let required = Set(schema["required"]?.array?.compactMap(\.string) ?? [])
    var pairs: [String] = []
    for (name, property) in properties {
      let value = try expression(for: property, path: "\(path).\(name)", depth: depth + 1)
      pairs.append(
        add(
          Self.ruleName(path + "-" + name) + "-kv",
          "\(Self.literal(OrderedJSON.quote(name))) \(ws) \":\" \(ws) \(value)"))
    }
    // tail(i, first): the members from i on; `first` when nothing precedes them.
    // Two rules per property keep optional members linear, not exponential.
    let base = Self.ruleName(path)
    var next: (first: String, later: String) = (#""""#, #""""#)
    for index in properties.indices.reversed() {
      let pair = pairs[index]
      let isRequired = required.contains(properties[index].0)
      let first = isRequired ? "\(pair) \(next.later)" : "\(pair) \(next.later) | \(next.first)"
      let later = isRequired ? "\",\" \(ws) \(pair) \(next.later)" : "\",\" \(ws) \(pair) \(next.later) | \(next.later)"
      next = (add("\(base)-\(index)-first", first), add("\(base)-\(index)-later", later))
    }
    return #""{" \#(ws) \#(next.first) \#(ws) "}""#
  }

  private mutating func referenced(_ reference: String, path: String, depth: Int) throws(HybridInferenceError) -> String
  {
    if let name = references[reference] { return name }
    guard let target = root.definition(at: reference) else {
      throw .unsupportedSchema(path: path, reason: "$ref \(reference) does not name a schema in $defs")
    }
    let name = add("ref-" + (reference.split(separator: "/").last.map(String.init) ?? "def"), #""""#)
    references[reference] = name
    let body = try expression(for: target, path: reference, depth: depth + 1)
    if let position = rules.firstIndex(where: { $0.0 == name }) { rules[position].1 = body }
    return name
  }

  /// A minimum and a maximum count, checked and clamped (see the type's
  /// comment); without a maximum, `defaultMaximum` or the minimum if larger.
  private static func bounds(
    _ schema: OrderedJSON, _ minimumKey: String, _ maximumKey: String, default defaultMaximum: Int, path: String
  ) throws(HybridInferenceError) -> (least: Int, most: Int) {
    let least = try count(schema, minimumKey, path: path) ?? 0
    let most = try count(schema, maximumKey, path: path)
    if let most, most < least {
      throw .unsupportedSchema(path: path, reason: "\(maximumKey) \(most) is below \(minimumKey) \(least)")
    }
    guard least <= maximumRepetitions else {
      throw .unsupportedSchema(
        path: path,
        reason: "\(minimumKey) \(least) is more than the device produces (at most \(maximumRepetitions))")
    }
    return (least, min(most ?? max(least, defaultMaximum), maximumRepetitions))
  }

  /// The value of `key` as a count: nil when absent; a number beyond `Int`
  /// is `Int.max` (clamped by the caller).
  private static func count(_ schema: OrderedJSON, _ key: String, path: String) throws(HybridInferenceError) -> Int? {
    guard let value = schema[key] else { return nil }
    // An integer beyond 2^53 is read exactly; a positive one is far past any clamp.
    if case .exactInteger(let integer) = value, !integer.digits.hasPrefix("-") { return Int.max }
    guard let number = value.number, number.isFinite, number >= 0, number == number.rounded(.towardZero) else {
      throw .unsupportedSchema(path: path, reason: "\(key) must be a non-negative integer, got \(value.jsonText)")
    }
    return number < 0x1p63 ? Int(number) : Int.max
  }

  private static func ruleName(_ path: String) -> String {
    String(path.dropFirst().prefix(40)).isEmpty ? "root-object" : "p" + String(path.dropFirst().prefix(40))
  }

  /// A GBNF string literal matching `text` exactly.
  static func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        out += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
