import HybridInferenceCore
import HybridInferenceRemote

/// What Gemini's `responseJsonSchema` accepts, checked before sending.
///
/// Gemini takes a documented subset of JSON Schema (types, properties,
/// required, additionalProperties, items/prefixItems, min/maxItems, enum,
/// format, minimum/maximum, anyOf, oneOf read as anyOf, `$ref`/`$defs`,
/// titles and descriptions) and answers anything else with a 400 that does
/// not say which keyword; refusing here names the keyword and the path.
enum GeminiSchemaCheck {
  static let keywords: Set<String> = [
    "$id", "$defs", "$ref", "$anchor", "$schema", "$comment", "type", "format", "title", "description",
    "enum", "const", "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "properties", "additionalProperties",
    "required", "propertyOrdering", "minLength", "maxLength", "pattern", "nullable", "default",
    "examples", "minProperties", "maxProperties", "definitions",
  ]
  /// Keywords whose value is a map of names to schemas.
  private static let schemaMaps: Set<String> = ["properties", "$defs", "definitions"]
  /// Keywords whose value is a schema or a list of schemas.
  private static let schemaValued: Set<String> = ["items", "prefixItems", "anyOf", "oneOf", "additionalProperties"]

  /// - Throws: `HybridInferenceError.unsupportedSchema` naming the first
  ///   keyword Gemini does not accept, and where it is.
  static func check(_ schema: GenerationSchema) throws(HybridInferenceError) {
    try check(try schema.ordered(), path: "$")
  }

  private static func check(_ schema: OrderedJSON, path: String) throws(HybridInferenceError) {
    guard let members = schema.members else { return }
    for (key, value) in members {
      guard keywords.contains(key) else {
        throw .unsupportedSchema(path: path, reason: "Gemini's responseJsonSchema does not accept \"\(key)\"")
      }
      if schemaMaps.contains(key), let entries = value.members {
        for (name, entry) in entries { try check(entry, path: "\(path).\(key).\(name)") }
      } else if schemaValued.contains(key) {
        if let list = value.array {
          for (index, entry) in list.enumerated() { try check(entry, path: "\(path).\(key)[\(index)]") }
        } else {
          try check(value, path: "\(path).\(key)")
        }
      }
    }
  }
}
