import Foundation

/// A JSON value whose object members keep their order.
///
/// `JSONValue` holds objects as dictionaries, which is right for data but
/// wrong for a schema: a schema's property order is the order the model
/// writes the fields in (on device by grammar, in the cloud by Gemini's own
/// rule), so the schema keeps its members in this form and only reads back
/// as a `JSONValue` on request.
package enum OrderedJSON: Sendable, Hashable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([OrderedJSON])
  case object([(String, OrderedJSON)])
  /// An integer beyond ±2^53, exactly (see `JSONValue.exactInteger`).
  case exactInteger(JSONValue.ExactInteger)

  package static func == (lhs: OrderedJSON, rhs: OrderedJSON) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.exactInteger(let a), .exactInteger(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
    default: false
    }
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(jsonText)
  }

  /// The value with its order kept, from a `JSONValue` whose object members
  /// are taken in sorted order (a dictionary has no other).
  package init(_ value: JSONValue) {
    switch value {
    case .null: self = .null
    case .bool(let flag): self = .bool(flag)
    case .number(let number): self = .number(number)
    case .exactInteger(let integer): self = .exactInteger(integer)
    case .string(let text): self = .string(text)
    case .array(let items): self = .array(items.map(OrderedJSON.init))
    case .object(let members):
      self = .object(members.keys.sorted().map { ($0, OrderedJSON(members[$0] ?? .null)) })
    }
  }

  /// The value a parser's scalar stands for.
  init(_ scalar: JSONScalar) {
    switch scalar {
    case .null: self = .null
    case .bool(let flag): self = .bool(flag)
    case .number(let number): self = .number(number)
    case .exactInteger(let integer): self = .exactInteger(integer)
    }
  }

  /// The same value without member order.
  package var jsonValue: JSONValue {
    switch self {
    case .null: .null
    case .bool(let flag): .bool(flag)
    case .number(let number): .number(number)
    case .exactInteger(let integer): .exactInteger(integer)
    case .string(let text): .string(text)
    case .array(let items): .array(items.map(\.jsonValue))
    case .object(let members):
      .object(Dictionary(members.map { ($0.0, $0.1.jsonValue) }, uniquingKeysWith: { _, last in last }))
    }
  }

  /// The member named `key` of an object.
  package subscript(key: String) -> OrderedJSON? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  /// The schema that `reference`, `#/$defs/name` (or `#/definitions/name`),
  /// names in this root schema; nil for any other reference.
  package func definition(at reference: String) -> OrderedJSON? {
    for prefix in ["#/$defs/", "#/definitions/"] where reference.hasPrefix(prefix) {
      let name = String(reference.dropFirst(prefix.count))
      return self[String(prefix.dropFirst(2).dropLast())]?[name]
    }
    return nil
  }

  package var string: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  package var number: Double? {
    if case .number(let number) = self { return number }
    return nil
  }

  package var array: [OrderedJSON]? {
    if case .array(let items) = self { return items }
    return nil
  }

  package var members: [(String, OrderedJSON)]? {
    if case .object(let members) = self { return members }
    return nil
  }

  /// Compact JSON text, members in order; integral numbers without a fraction.
  package var jsonText: String {
    var out = ""
    write(to: &out)
    return out
  }

  private func write(to out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let flag): out += flag ? "true" : "false"
    case .number(let number): out += Self.format(number)
    case .exactInteger(let integer): out += integer.digits
    case .string(let text): out += Self.quote(text)
    case .array(let items):
      out += "["
      for (index, item) in items.enumerated() {
        if index > 0 { out += "," }
        item.write(to: &out)
      }
      out += "]"
    case .object(let members):
      out += "{"
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { out += "," }
        out += Self.quote(key) + ":"
        value.write(to: &out)
      }
      out += "}"
    }
  }

  static func format(_ number: Double) -> String {
    if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
      return String(Int64(number))
    }
    return number.isFinite ? "\(number)" : "null"
  }

  /// A JSON string literal, escaped as Python's `json.dumps` does without
  /// `ensure_ascii`: the same bytes as the chat templates' `tojson`
  /// (`JSONStringLiteral` in the Jinja target, which this target cannot
  /// import; `OrderedJSONQuotingTests` keeps the two identical).
  package static func quote(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x22: out += "\\\""
      case 0x5C: out += "\\\\"
      case 0x0A: out += "\\n"
      case 0x0D: out += "\\r"
      case 0x09: out += "\\t"
      case 0x08: out += "\\b"
      case 0x0C: out += "\\f"
      case 0..<0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}

extension OrderedJSON: Encodable {
  /// Encodes members in order; an encoder that sorts or hashes its keys (as
  /// Foundation's does on Linux) may still reorder them on the wire.
  package func encode(to encoder: any Encoder) throws {
    switch self {
    case .null:
      var container = encoder.singleValueContainer()
      try container.encodeNil()
    case .bool(let flag):
      var container = encoder.singleValueContainer()
      try container.encode(flag)
    case .number(let number):
      var container = encoder.singleValueContainer()
      if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
        try container.encode(Int64(number))
      } else {
        try container.encode(number)
      }
    case .exactInteger(let integer):
      try JSONValue.exactInteger(integer).encode(to: encoder)
    case .string(let text):
      var container = encoder.singleValueContainer()
      try container.encode(text)
    case .array(let items):
      var container = encoder.unkeyedContainer()
      for item in items { try container.encode(item) }
    case .object(let members):
      var container = encoder.container(keyedBy: MemberKey.self)
      for (key, value) in members { try container.encode(value, forKey: MemberKey(key)) }
    }
  }

  private struct MemberKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }
}
