import Foundation

/// Checks a JSON value against a JSON Schema (the subset this library
/// serves: type, enum, const, properties, required, additionalProperties,
/// items, minItems/maxItems, minLength/maxLength, pattern, minimum/maximum,
/// anyOf/oneOf, `$ref` to `#/$defs/...`).
///
/// The device grammar guarantees syntax and most of the shape, but not a
/// number range, and the cloud guarantees less than it says; checking the
/// answer where it is produced lets a hybrid fall back instead of the app
/// receiving a value that breaks its own rules.
struct SchemaValidator {
  let root: OrderedJSON

  /// Nil when `value` conforms; else why not, with the path.
  func violation(of value: OrderedJSON) -> String? {
    violation(value, root, path: "$", depth: 0)
  }

  private func violation(_ value: OrderedJSON, _ schema: OrderedJSON, path: String, depth: Int) -> String? {
    guard depth < 64 else { return "\(path): the schema nests too deeply" }
    if case .bool(let allowed) = schema { return allowed ? nil : "\(path): no value is allowed" }
    if let reference = schema["$ref"]?.string {
      guard let target = resolve(reference) else { return "\(path): unknown $ref \(reference)" }
      return violation(value, target, path: path, depth: depth + 1)
    }
    if let choices = (schema["anyOf"] ?? schema["oneOf"])?.array {
      let matches = choices.contains { violation(value, $0, path: path, depth: depth + 1) == nil }
      if !matches { return "\(path): matches none of the alternatives" }
    }
    if let constant = schema["const"], constant != value { return "\(path): is not \(constant.jsonText)" }
    if let options = schema["enum"]?.array, !options.contains(value) {
      return "\(path): \(value.jsonText) is not one of \(OrderedJSON.array(options).jsonText)"
    }
    if let problem = typeViolation(value, schema, path: path) { return problem }
    switch value {
    case .string(let text): return stringViolation(text, schema, path: path)
    case .number(let number): return numberViolation(number, schema, path: path)
    case .array(let items):
      if let least = schema["minItems"]?.number, Double(items.count) < least {
        return "\(path): fewer than \(OrderedJSON.format(least)) items"
      }
      if let most = schema["maxItems"]?.number, Double(items.count) > most {
        return "\(path): more than \(OrderedJSON.format(most)) items"
      }
      if let itemSchema = schema["items"] {
        for (index, item) in items.enumerated() {
          if let problem = violation(item, itemSchema, path: "\(path)[\(index)]", depth: depth + 1) { return problem }
        }
      }
    case .object(let members):
      let properties = schema["properties"]?.members ?? []
      for name in schema["required"]?.array?.compactMap(\.string) ?? [] where !members.contains(where: { $0.0 == name })
      {
        return "\(path): missing \(name)"
      }
      for (name, member) in members {
        if let propertySchema = properties.first(where: { $0.0 == name })?.1 {
          if let problem = violation(member, propertySchema, path: "\(path).\(name)", depth: depth + 1) {
            return problem
          }
        } else if case .bool(false)? = schema["additionalProperties"] {
          return "\(path): unexpected member \(name)"
        }
      }
    default: break
    }
    return nil
  }

  private func typeViolation(_ value: OrderedJSON, _ schema: OrderedJSON, path: String) -> String? {
    let types: [String]
    switch schema["type"] {
    case .string(let name)?: types = [name]
    case .array(let names)?: types = names.compactMap(\.string)
    default: return nil
    }
    let fits = types.contains { type in
      switch (type, value) {
      case ("string", .string), ("boolean", .bool), ("null", .null), ("array", .array), ("object", .object),
        ("number", .number):
        return true
      case ("integer", .number(let number)): return number == number.rounded()
      default: return false
      }
    }
    return fits ? nil : "\(path): \(value.jsonText) is not of type \(types.joined(separator: " or "))"
  }

  private func stringViolation(_ text: String, _ schema: OrderedJSON, path: String) -> String? {
    // Counted in Unicode scalars, as the device grammar counts them.
    if let least = schema["minLength"]?.number, Double(text.unicodeScalars.count) < least {
      return "\(path): shorter than \(OrderedJSON.format(least)) characters"
    }
    if let most = schema["maxLength"]?.number, Double(text.unicodeScalars.count) > most {
      return "\(path): longer than \(OrderedJSON.format(most)) characters"
    }
    if let pattern = schema["pattern"]?.string,
      let expression = try? NSRegularExpression(pattern: pattern),
      expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
    {
      return "\(path): does not match \(pattern)"
    }
    return nil
  }

  private func numberViolation(_ number: Double, _ schema: OrderedJSON, path: String) -> String? {
    if let least = schema["minimum"]?.number, number < least { return "\(path): below \(least)" }
    if let most = schema["maximum"]?.number, number > most { return "\(path): above \(most)" }
    if let least = schema["exclusiveMinimum"]?.number, number <= least { return "\(path): not above \(least)" }
    if let most = schema["exclusiveMaximum"]?.number, number >= most { return "\(path): not below \(most)" }
    return nil
  }

  /// `#/$defs/name` (or `#/definitions/name`) in the root schema.
  func resolve(_ reference: String) -> OrderedJSON? {
    for prefix in ["#/$defs/", "#/definitions/"] where reference.hasPrefix(prefix) {
      let name = String(reference.dropFirst(prefix.count))
      return root[String(prefix.dropFirst(2).dropLast())]?[name]
    }
    return nil
  }
}

extension GenerationSchema {
  /// Parses `text` and checks it against the schema (and, for a derived
  /// schema, that it decodes into the type).
  /// - Throws: `HybridInferenceError.invalidStructuredOutput` saying what is wrong.
  func check(_ text: String) throws(HybridInferenceError) -> OrderedJSON {
    let schema = try ordered()
    let value: OrderedJSON
    do {
      value = try JSONPrefixParser.parse(text)
    } catch {
      throw .invalidStructuredOutput("the answer is not JSON (\(error)): \(text.prefix(200))")
    }
    if let problem = SchemaValidator(root: schema).violation(of: value) {
      throw .invalidStructuredOutput(problem)
    }
    if let decodeCheck {
      do {
        try decodeCheck(Data(text.utf8))
      } catch {
        throw .invalidStructuredOutput("the answer does not decode: \(error)")
      }
    }
    return value
  }
}
