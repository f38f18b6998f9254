import Foundation

/// Why deriving stopped: the field (`ingredients[].unit`) and the reason.
struct DerivationFailure: Error {
  let path: String
  let reason: String
}

/// Derives a JSON Schema from a `Decodable` type by running its `init(from:)`
/// against a decoder that hands out placeholder values and records what was
/// asked for: which keys, of which types, in which order, optional or not.
///
/// This is the only way to see a type's shape without macros or reflection
/// of private storage, and it sees exactly what `JSONDecoder` will need,
/// custom `CodingKeys` included.
final class SchemaRecorder {
  private let descriptions: [String: String]
  private var inProgress: [ObjectIdentifier] = []

  init(descriptions: [String: String]) {
    self.descriptions = descriptions
  }

  func schema<Value: Decodable>(of type: Value.Type) throws(DerivationFailure) -> OrderedJSON {
    let (schema, _) = try record(type, path: [])
    return described(schema, at: [])
  }

  /// The schema of `type` at `path` and a placeholder value of it.
  func record<Value: Decodable>(_ type: Value.Type, path: [String]) throws(DerivationFailure) -> (
    OrderedJSON, Value
  ) {
    if let (schema, placeholder) = Self.primitive(type), let value = placeholder as? Value {
      return (schema, value)
    }
    if let enumeration = type as? any (CaseIterable & RawRepresentable).Type {
      return try recordEnumeration(enumeration, as: type, path: path)
    }
    if type is any DictionaryMarker.Type {
      throw failure(path, "a dictionary has no fixed fields; use a struct, or an array of key-value structs")
    }
    let identifier = ObjectIdentifier(type)
    guard !inProgress.contains(identifier) else {
      throw failure(path, "\(type) contains itself; a recursive type cannot be described")
    }
    inProgress.append(identifier)
    defer { inProgress.removeLast() }
    let node = RecordingNode()
    let decoder = RecordingDecoder(recorder: self, node: node, path: path)
    let value: Value
    do {
      value = try Value(from: decoder)
    } catch let error as DerivationFailure {
      throw error
    } catch {
      if let failure = node.failure { throw failure }
      throw failure(path, "\(type)'s init(from:) refused placeholder values (\(error)); give it a schema by hand")
    }
    if let failure = node.failure { throw failure }
    // A type that reads nothing (a struct without properties, such as the
    // arguments of a tool that takes none) accepts `{}`: an empty object.
    let empty = OrderedJSON.object([("type", .string("object")), ("properties", .object([]))])
    return (node.schema(describe: { self.described($0, at: $1) }, path: path) ?? empty, value)
  }

  private func recordEnumeration<Value: Decodable, Enumeration: CaseIterable & RawRepresentable>(
    _ enumeration: Enumeration.Type, as type: Value.Type, path: [String]
  ) throws(DerivationFailure) -> (OrderedJSON, Value) {
    let names = enumeration.allCases.compactMap { $0.rawValue as? String }
    guard !names.isEmpty, names.count == enumeration.allCases.count,
      let first = enumeration.allCases.first as? Value
    else {
      throw failure(path, "\(type) is an enum without String raw values or without cases")
    }
    return (.object([("type", .string("string")), ("enum", .array(names.map(OrderedJSON.string)))]), first)
  }

  /// `schema` with the description the caller gave for `path`, after its type.
  func described(_ schema: OrderedJSON, at path: [String]) -> OrderedJSON {
    let key = path.filter { $0 != "[]" }.joined(separator: ".")
    guard let description = descriptions[key], var members = schema.members else { return schema }
    let position = members.first?.0 == "type" ? 1 : 0
    members.insert(("description", .string(description)), at: position)
    return .object(members)
  }

  func failure(_ path: [String], _ reason: String) -> DerivationFailure {
    DerivationFailure(path: Self.display(path), reason: reason)
  }

  static func display(_ path: [String]) -> String {
    guard !path.isEmpty else { return "$" }
    var out = ""
    for component in path {
      if component == "[]" {
        out += "[]"
      } else {
        out += out.isEmpty ? component : "." + component
      }
    }
    return out
  }

  private static func primitive(_ type: Any.Type) -> (OrderedJSON, Any)? {
    let string: OrderedJSON = .object([("type", .string("string"))])
    let integer: OrderedJSON = .object([("type", .string("integer"))])
    let number: OrderedJSON = .object([("type", .string("number"))])
    switch type {
    case is String.Type: return (string, "")
    case is Bool.Type: return (.object([("type", .string("boolean"))]), false)
    case is Int.Type: return (integer, 0 as Int)
    case is Int8.Type: return (integer, 0 as Int8)
    case is Int16.Type: return (integer, 0 as Int16)
    case is Int32.Type: return (integer, 0 as Int32)
    case is Int64.Type: return (integer, 0 as Int64)
    case is UInt.Type: return (integer, 0 as UInt)
    case is UInt8.Type: return (integer, 0 as UInt8)
    case is UInt16.Type: return (integer, 0 as UInt16)
    case is UInt32.Type: return (integer, 0 as UInt32)
    case is UInt64.Type: return (integer, 0 as UInt64)
    case is Double.Type: return (number, 0 as Double)
    case is Float.Type: return (number, 0 as Float)
    case is Decimal.Type: return (number, Decimal(0))
    default: return nil
    }
  }
}

/// Marks dictionaries, which deriving refuses (their keys are data, not fields).
protocol DictionaryMarker {}
extension Dictionary: DictionaryMarker {}

/// What one value's `init(from:)` asked for.
final class RecordingNode {
  enum Kind {
    case object(members: [(String, OrderedJSON)], required: [String])
    case array(items: OrderedJSON?)
    case single(OrderedJSON)
  }

  var kind: Kind?
  /// Keys probed with `contains` or `decodeNil` before being read: optional.
  var probed: Set<String> = []
  /// The first thing that could not be described; reported after `init(from:)`.
  var failure: DerivationFailure?

  func fail(_ failure: DerivationFailure) {
    if self.failure == nil { self.failure = failure }
  }

  func schema(describe: (OrderedJSON, [String]) -> OrderedJSON, path: [String]) -> OrderedJSON? {
    switch kind {
    case nil: return nil
    case .single(let schema): return schema
    case .array(let items):
      return .object([("type", .string("array")), ("items", items ?? .object([]))])
    case .object(let members, let required):
      let properties = members.map { key, schema in (key, describe(schema, path + [key])) }
      return .object([
        ("type", .string("object")), ("properties", .object(properties)),
        ("required", .array(required.map(OrderedJSON.string))), ("additionalProperties", .bool(false)),
      ])
    }
  }
}
