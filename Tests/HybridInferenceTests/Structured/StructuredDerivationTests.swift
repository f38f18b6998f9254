import Foundation
import HybridInference
import XCTest

/// Schema derivation: a dozen shapes, each compared with the JSON Schema expected.
final class StructuredDerivationTests: XCTestCase {
  struct Flat: Generable {
    var name: String
    var count: Int
    var ratio: Double
    var done: Bool
  }
  enum Unit: String, Decodable, CaseIterable, Sendable {
    case gram = "g"
    case cup, spoon
  }
  struct Ingredient: Decodable, Sendable {
    var name: String
    var amount: Double?
    var unit: Unit
  }
  struct Nested: Generable {
    var ingredient: Ingredient
    var steps: [Ingredient]
  }
  struct Renamed: Generable {
    var fullName: String
    var age: Int8
    enum CodingKeys: String, CodingKey {
      case fullName = "full_name"
      case age
    }
  }
  struct Matrix: Generable { var rows: [[Int]] }
  struct OptionalArray: Generable {
    var tags: [String]?
    var note: String?
  }
  struct Recursive: Generable {
    var name: String
    var children: [Recursive]
  }
  struct WithDictionary: Generable { var scores: [String: Int] }
  struct Branching: Generable {
    var value: String
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: Keys.self)
      value = container.allKeys.isEmpty ? "" : try container.decode(String.self, forKey: .value)
    }
    enum Keys: String, CodingKey { case value }
  }
  struct WithUUID: Generable { var id: UUID }

  private func expect<T: Generable>(_ type: T.Type, _ json: String, file: StaticString = #filePath, line: UInt = #line)
  {
    XCTAssertEqual(try type.generationSchema.jsonSchemaText(), json, file: file, line: line)
  }

  private func object(_ properties: String, required: String) -> String {
    #"{"type":"object","properties":{"# + properties + #"},"required":["# + required
      + #"],"additionalProperties":false}"#
  }

  func testFlatPrimitives() {
    expect(
      Flat.self,
      object(
        #""name":{"type":"string"},"count":{"type":"integer"},"ratio":{"type":"number"},"done":{"type":"boolean"}"#,
        required: #""name","count","ratio","done""#))
  }

  func testRecipeWithDescription() {
    expect(
      Recipe.self,
      object(
        #""title":{"type":"string"},"minutes":{"type":"integer","description":"Total time in minutes"},"#
          + #""vegetarian":{"type":"boolean"},"ingredients":{"type":"array","items":{"type":"string"}}"#,
        required: #""title","minutes","vegetarian","ingredients""#))
  }

  func testNestedStructsArraysOptionalsAndEnums() {
    let ingredient = object(
      #""name":{"type":"string"},"amount":{"type":"number"},"unit":{"type":"string","enum":["g","cup","spoon"]}"#,
      required: #""name","unit""#)
    expect(
      Nested.self,
      object(
        #""ingredient":"# + ingredient + #","steps":{"type":"array","items":"# + ingredient + "}",
        required: #""ingredient","steps""#))
  }

  func testCodingKeysAndSmallIntegers() {
    expect(
      Renamed.self,
      object(#""full_name":{"type":"string"},"age":{"type":"integer"}"#, required: #""full_name","age""#))
  }

  func testArrayOfArrays() {
    expect(
      Matrix.self,
      object(#""rows":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}"#, required: #""rows""#))
  }

  func testOptionalsAreNotRequired() {
    expect(
      OptionalArray.self,
      object(#""tags":{"type":"array","items":{"type":"string"}},"note":{"type":"string"}"#, required: ""))
  }

  func testNestedDescriptionsByDottedPath() throws {
    let schema = GenerationSchema(
      deriving: Nested.self, descriptions: ["": "A step", "steps.unit": "The unit", "ingredient.name": "What"])
    let text = try schema.jsonSchemaText()
    XCTAssertTrue(text.hasPrefix(#"{"type":"object","description":"A step","#), text)
    XCTAssertTrue(text.contains(#""unit":{"type":"string","description":"The unit","enum""#), text)
    XCTAssertTrue(text.contains(#""name":{"type":"string","description":"What"}"#), text)
  }

  func testRecursionIsATypedErrorNamingThePath() {
    assertUnsupported(Recursive.self, path: "children[]")
  }

  func testDictionaryIsATypedError() {
    assertUnsupported(WithDictionary.self, path: "scores")
  }

  func testBranchingDecoderIsATypedError() {
    assertUnsupported(Branching.self, path: "$")
  }

  func testTypeRefusingPlaceholdersIsATypedError() {
    assertUnsupported(WithUUID.self, path: "id")
  }

  private func assertUnsupported<T: Generable>(_ type: T.Type, path expected: String, line: UInt = #line) {
    XCTAssertThrowsError(try type.generationSchema.jsonSchemaText(), line: line) { error in
      guard case .unsupportedSchema(let path, _)? = error as? HybridInferenceError else {
        return XCTFail("\(error)", line: line)
      }
      XCTAssertEqual(path, expected, line: line)
    }
  }

  func testHandWrittenSchemaKeepsOrderAndReadsBack() throws {
    let text = #"{"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"string"}},"required":["z"]}"#
    let schema = try GenerationSchema(jsonSchema: text)
    XCTAssertEqual(try schema.jsonSchemaText(), text)
    let value = try schema.jsonSchema
    XCTAssertEqual(value["required"], .array([.string("z")]))
    XCTAssertEqual(try GenerationSchema(jsonSchema: value), try GenerationSchema(jsonSchema: value))
    XCTAssertThrowsError(try GenerationSchema(jsonSchema: "[1]"))
    XCTAssertThrowsError(try GenerationSchema(jsonSchema: "{\"type\":"))
  }

  /// Foundation's encoder may reorder members; the schema's content survives.
  func testSchemaEncodesAndDecodes() throws {
    let text = #"{"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"string"}}}"#
    let schema = try GenerationSchema(jsonSchema: text)
    let decoded = try JSONDecoder().decode(GenerationSchema.self, from: JSONEncoder().encode(schema))
    XCTAssertEqual(try decoded.jsonSchema, try schema.jsonSchema)
  }
}
