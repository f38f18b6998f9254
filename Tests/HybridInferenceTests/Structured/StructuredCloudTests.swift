import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Structured output against the loopback Gemini server, whose `json`
/// behaviour answers 400 unless the request carries the schema.
final class StructuredCloudTests: CloudTestCase {

  func testRespondGeneratingSendsTheSchemaAndDecodes() async throws {
    let name = "json~\(uniqueID())"
    let recipe = try await session(name).respond(to: "A quick pancake recipe", generating: Recipe.self)
    XCTAssertEqual(recipe.content.minutes, 7)
    XCTAssertEqual(recipe.content.ingredients.count, 2)
    XCTAssertEqual(recipe.rawResponse.modelVersion, "json-model")
    let last = try await server.lastRequest(name)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    let config = try XCTUnwrap(body["generationConfig"] as? [String: Any])
    XCTAssertEqual(config["responseMimeType"] as? String, "application/json")
    let schema = try XCTUnwrap(config["responseJsonSchema"] as? [String: Any])
    let properties = try XCTUnwrap(schema["properties"] as? [String: Any])
    XCTAssertEqual(Set(properties.keys), ["title", "minutes", "vegetarian", "ingredients"])
    XCTAssertEqual((properties["minutes"] as? [String: Any])?["description"] as? String, "Total time in minutes")
  }

  func testTheSchemaOnTheWire_keepsItsPropertyOrder() throws {
    // Gemini writes the fields in the schema's order; JSONEncoder alone would shuffle them.
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt("pancakes")]), responseSchema: Recipe.generationSchema)
    let body = try RequestBodyEncoder.encode(GenerateContentRequest(request, safetySettings: nil))
    let text = String(decoding: body, as: UTF8.self)
    let positions = ["\"title\":", "\"minutes\":", "\"vegetarian\":", "\"ingredients\":"].map {
      text.range(of: $0)?.lowerBound
    }
    XCTAssertEqual(positions.compactMap { $0 }.count, 4, text)
    XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), text)
    XCTAssertNoThrow(try JSONSerialization.jsonObject(with: body), text)
  }

  func testStreamedStructuredAnswerGrowsAndCollects() async throws {
    let stream = session("json").streamResponse(to: "pancakes", generating: Recipe.self)
    var count = 0
    for try await _ in stream { count += 1 }
    XCTAssertEqual(count, 3)
    let recipe = try await session("json").streamResponse(to: "pancakes", generating: Recipe.self).collect()
    XCTAssertEqual(recipe.content.title, "a \"quoted\" text, été")
  }

  func testDynamicSchemaWithEnumAndNestedArray() async throws {
    let schema = try GenerationSchema(
      jsonSchema: #"""
        {"type":"object","properties":{"mood":{"type":"string","enum":["happy","sad"]},
        "items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}},
        "required":["mood","items"]}
        """#)
    let answer = try await session("json").respond(to: "mood", schema: schema)
    XCTAssertEqual(answer.content["mood"], .string("sad"))
  }

  func testKeywordGeminiRefusesIsATypedErrorBeforeSending() async throws {
    let name = "json~\(uniqueID())"
    let schema = try GenerationSchema(jsonSchema: #"{"type":"object","not":{"type":"string"}}"#)
    let error = await captureError { try await self.session(name).respond(to: "x", schema: schema) }
    guard case .unsupportedSchema(let path, _)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertEqual(path, "$")
  }

  func testHybridFallsBackToTheCloudWithTheSchemaWhenTheDeviceCannotServeIt() async throws {
    let name = "json~\(uniqueID())"
    let device = ScriptedModel(
      "device", placement: .onDevice,
      script: [.fail(HybridInferenceError.unsupportedSchema(path: "$.code", reason: "pattern"))])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: device, secondary: server.model(name, requestOptions: .fastTests)),
      logHandler: .silent)
    let recipe = try await session.respond(to: "pancakes", generating: Recipe.self)
    XCTAssertEqual(recipe.rawResponse.modelVersion, "json-model")
    let last = try await server.lastRequest(name)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    XCTAssertNotNil((body["generationConfig"] as? [String: Any])?["responseJsonSchema"])
  }
}
