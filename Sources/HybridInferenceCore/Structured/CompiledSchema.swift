import Foundation

/// A JSON Schema read once into numbered nodes, so that a check can
/// remember what it found for each (schema node, value) pair.
///
/// Every schema object reachable through a keyword the validator reads is a
/// node; `$ref` to `#/$defs/name` (or `#/definitions/name`) is resolved to
/// the node of that definition, so a recursive schema is a graph, not an
/// endless tree. Built per check, in time linear in the schema.
struct CompiledSchema {
  struct Node {
    /// `true` or `false` as a whole schema.
    var allows: Bool?
    /// The node a `$ref` resolves to, or why it does not.
    var reference: Result<Int, ReferenceError>?
    var alternatives: [Int]?
    var constant: OrderedJSON?
    var options: [OrderedJSON]?
    var types: [String]?
    var minLength: Double?
    var maxLength: Double?
    var pattern: String?
    /// Bounds as written: `.number`, or `.exactInteger` beyond 2^53.
    var minimum: OrderedJSON?
    var maximum: OrderedJSON?
    var exclusiveMinimum: OrderedJSON?
    var exclusiveMaximum: OrderedJSON?
    var minItems: Double?
    var maxItems: Double?
    var items: Int?
    /// Property schemas by name; the first of a repeated name counts.
    var properties: [String: Int] = [:]
    var required: [String] = []
    var forbidsOtherMembers = false
  }

  struct ReferenceError: Error {
    let reference: String
  }

  private(set) var nodes: [Node] = []
  /// Nodes a check can reach more than once at the same part of a value:
  /// definitions (any number of `$ref`s) and alternatives. A node reached
  /// through `items` or `properties` is reached once per check of its
  /// parent, so only these results need remembering.
  private(set) var shared: Set<Int> = []
  private var definitions: [String: Int] = [:]

  /// The schema `root`; node 0 is its root.
  init(_ root: OrderedJSON) {
    nodes.append(Node())
    // Definitions first, so that references anywhere can be resolved as read.
    for prefix in ["$defs", "definitions"] {
      for (name, _) in root[prefix]?.members ?? [] where definitions["#/\(prefix)/\(name)"] == nil {
        let id = reserve()
        definitions["#/\(prefix)/\(name)"] = id
        shared.insert(id)
      }
    }
    var filled: Set<Int> = []
    for prefix in ["$defs", "definitions"] {
      for (name, schema) in root[prefix]?.members ?? [] {
        if let id = definitions["#/\(prefix)/\(name)"], filled.insert(id).inserted { fill(id, from: schema) }
      }
    }
    fill(0, from: root)
  }

  private mutating func reserve() -> Int {
    nodes.append(Node())
    return nodes.count - 1
  }

  private mutating func compile(_ schema: OrderedJSON) -> Int {
    let id = reserve()
    fill(id, from: schema)
    return id
  }

  /// Reads `schema` into node `id`. Recurses as deep as the schema nests,
  /// which `GenerationSchema` bounds (512 levels) where a schema is made.
  private mutating func fill(_ id: Int, from schema: OrderedJSON) {
    var node = Node()
    if case .bool(let allows) = schema {
      node.allows = allows
      nodes[id] = node
      return
    }
    if let reference = schema["$ref"]?.string {
      node.reference = definitions[reference].map(Result.success) ?? .failure(ReferenceError(reference: reference))
      nodes[id] = node
      return
    }
    if let choices = (schema["anyOf"] ?? schema["oneOf"])?.array {
      node.alternatives = choices.map { compile($0) }
      shared.formUnion(node.alternatives ?? [])
    }
    node.constant = schema["const"]
    node.options = schema["enum"]?.array
    switch schema["type"] {
    case .string(let name)?: node.types = [name]
    case .array(let names)?: node.types = names.compactMap(\.string)
    default: break
    }
    node.minLength = schema["minLength"]?.number
    node.maxLength = schema["maxLength"]?.number
    node.pattern = schema["pattern"]?.string
    node.minimum = schema["minimum"].flatMap(NumberBounds.numeric)
    node.maximum = schema["maximum"].flatMap(NumberBounds.numeric)
    node.exclusiveMinimum = schema["exclusiveMinimum"].flatMap(NumberBounds.numeric)
    node.exclusiveMaximum = schema["exclusiveMaximum"].flatMap(NumberBounds.numeric)
    node.minItems = schema["minItems"]?.number
    node.maxItems = schema["maxItems"]?.number
    if let items = schema["items"] { node.items = compile(items) }
    for (name, property) in schema["properties"]?.members ?? [] where node.properties[name] == nil {
      node.properties[name] = compile(property)
    }
    node.required = schema["required"]?.array?.compactMap(\.string) ?? []
    if case .bool(false)? = schema["additionalProperties"] { node.forbidsOtherMembers = true }
    nodes[id] = node
  }
}
