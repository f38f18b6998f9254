import Foundation

/// The shape a structured answer must have: a JSON Schema, in order.
///
/// Both backends read it: the cloud sends it as Gemini's `responseJsonSchema`,
/// the device turns it into a grammar that the sampler enforces. Build one by
/// deriving it from a `Decodable` type (no macros: the type's own `init(from:)`
/// is walked by a recording decoder) or from a JSON Schema written by hand.
///
/// Deriving never traps and, so that `static let generationSchema =
/// GenerationSchema(deriving: T.self)` needs no `try`, never throws either: a
/// type it cannot describe gives a schema that carries the error (naming the
/// field), and every use of it throws that error before anything is sent.
public struct GenerationSchema: Sendable, Hashable, CustomStringConvertible {
  enum State: Sendable, Hashable {
    case schema(OrderedJSON)
    case failed(path: String, reason: String)
  }

  let state: State
  /// For a derived schema: decodes an answer into the type, so an answer the
  /// grammar allowed but the type refuses is caught where the model can
  /// still be replaced (on device, before a hybrid falls back).
  let decodeCheck: (@Sendable (Data) throws -> Void)?

  init(state: State, decodeCheck: (@Sendable (Data) throws -> Void)? = nil) {
    self.state = state
    self.decodeCheck = decodeCheck
  }

  /// The schema of `type`, derived from its `Decodable` conformance.
  ///
  /// Rules: a struct is an object whose properties are its coding keys in the
  /// order `init(from:)` reads them; non-optional properties are required,
  /// optional ones are not; arrays are `array` with `items`; `String`,
  /// `Bool`, integer and floating-point types are `string`, `boolean`,
  /// `integer`, `number`; a `String`-backed `CaseIterable` enum is a string
  /// `enum` of its raw values. Dictionaries, recursive types and decoders
  /// that look at which keys are present cannot be described: the schema
  /// then carries `HybridInferenceError.unsupportedSchema` naming the field.
  ///
  /// - Parameters:
  ///   - type: The type answers decode into.
  ///   - descriptions: What the model is told about each field, by
  ///     property name; nested fields by dotted path (`"address.city"`,
  ///     `"ingredients.amount"` for a field of an array's elements); `""` for
  ///     the type itself.
  public init<Value: Decodable & SendableMetatype>(deriving type: Value.Type, descriptions: [String: String] = [:]) {
    do {
      let schema = try SchemaRecorder(descriptions: descriptions).schema(of: type)
      self.init(state: .schema(schema)) { data in _ = try JSONDecoder().decode(Value.self, from: data) }
    } catch {
      self.init(state: .failed(path: error.path, reason: error.reason))
    }
  }

  /// A schema written by hand, as JSON Schema text. Member order is kept.
  /// - Throws: `HybridInferenceError.unsupportedSchema` when the text is not
  ///   a JSON object, or nests deeper than 512 levels (every walk over a
  ///   schema recurses, so depth is bounded where a schema is made).
  public init(jsonSchema: String) throws(HybridInferenceError) {
    let value: OrderedJSON
    do {
      value = try JSONPrefixParser.parse(jsonSchema)
    } catch {
      throw .unsupportedSchema(path: "$", reason: "not JSON: \(error)")
    }
    try self.init(ordered: value)
  }

  /// A schema written by hand, as a `JSONValue`. A dictionary has no order,
  /// so properties are taken in name order; use the string form to choose it.
  /// - Throws: as `init(jsonSchema:)` for text.
  public init(jsonSchema: JSONValue) throws(HybridInferenceError) {
    guard !jsonSchema.nests(deeperThan: JSONValue.maximumDepth) else {
      throw .unsupportedSchema(
        path: "$", reason: "the schema nests deeper than \(JSONValue.maximumDepth) levels")
    }
    try self.init(ordered: OrderedJSON(jsonSchema))
  }

  init(ordered value: OrderedJSON) throws(HybridInferenceError) {
    guard value.members != nil else {
      throw .unsupportedSchema(path: "$", reason: "a JSON Schema must be an object")
    }
    self.init(state: .schema(value))
  }

  /// The JSON Schema as a `JSONValue`.
  /// - Throws: the error deriving met, naming the field it could not describe.
  public var jsonSchema: JSONValue {
    get throws(HybridInferenceError) { try ordered().jsonValue }
  }

  /// The JSON Schema as compact JSON text, properties in order.
  /// - Throws: the error deriving met, naming the field it could not describe.
  public func jsonSchemaText() throws(HybridInferenceError) -> String {
    try ordered().jsonText
  }

  /// The error deriving met, if any: every use of the schema throws it.
  public var derivationError: HybridInferenceError? {
    if case .failed(let path, let reason) = state { return .unsupportedSchema(path: path, reason: reason) }
    return nil
  }

  /// The schema's JSON text, or the error that stops it from having one.
  public var description: String {
    switch state {
    case .schema(let value): value.jsonText
    case .failed(let path, let reason): "GenerationSchema(unsupported at \(path): \(reason))"
    }
  }

  package func ordered() throws(HybridInferenceError) -> OrderedJSON {
    switch state {
    case .schema(let value): return value
    case .failed(let path, let reason): throw .unsupportedSchema(path: path, reason: reason)
    }
  }

  /// Equal when the JSON Schemas are (the decoding check is not compared).
  public static func == (lhs: GenerationSchema, rhs: GenerationSchema) -> Bool {
    lhs.state == rhs.state
  }

  /// Hashes the JSON Schema.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(state)
  }
}

extension GenerationSchema: Codable {
  /// Reads a JSON Schema (property order as the decoder gives it).
  public init(from decoder: any Decoder) throws {
    try self.init(jsonSchema: JSONValue(from: decoder))
  }

  /// Writes the JSON Schema; a schema that failed to derive throws its error
  /// instead of writing something wrong. Properties stay in order where the
  /// encoder allows it: in the library's request bodies (`RequestBodyEncoder`)
  /// always; Foundation's `JSONEncoder` alone writes keys in hash order.
  public func encode(to encoder: any Encoder) throws {
    let schema = try ordered()
    if let splices = JSONSplices.of(encoder) {
      var container = encoder.singleValueContainer()
      try container.encode(splices.placeholder(for: schema.jsonText))
    } else {
      try schema.encode(to: encoder)
    }
  }
}
