// swift-format-ignore-file
// (The second contract snippet's structured-output lines below are kept byte for byte.)

import Foundation
import HybridInference
import TestPrerequisites
import XCTest

/// The structured-output part of the second contract snippet (kept byte for byte),
/// unchanged, compiles against the library and runs on the default model.
/// Prefer-on-device answers on the device; the cloud secondary points at a
/// closed loopback port, so a fallback would fail the test rather than pass
/// it quietly. The snippet's `print` is this file's (`SnippetOutput`), so the
/// test reads the stream's partials.
final class StructuredContractSnippetTests: XCTestCase {
  func testDesignStructuredOutputSnippetCompilesAndRuns() async throws {
    guard LocalSystemModel.default.isAvailable else {
      throw Prerequisite.missing("the default model (run make test, which provisions it); the snippet compiled")
    }
    let (results, output) = try await Self.runSnippet()
    XCTAssertEqual(results.recipe.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    // The snippet samples with a random seed, so what the title says is the
    // model's (a 135M model sometimes writes an empty one: CI, stop 38); that
    // the value is the one the model wrote is the library's.
    let written = try JSONDecoder().decode(JSONValue.self, from: Data(results.recipe.jsonText.utf8))
    XCTAssertEqual(written["title"], .string(results.recipe.content.title), results.recipe.jsonText)
    guard case .number? = results.any.content["n"] else {
      return XCTFail("n is not a number: \(results.any.jsonText)")
    }
    XCTAssertEqual(results.any.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    // What the snippet printed: the title and the model, then each partial.
    let lines = output.lines
    XCTAssertEqual(lines.first?.text, "\(results.recipe.content.title) \(LocalSystemModel.modelVersion)")
    let partials = lines.dropFirst().compactMap(\.json)
    XCTAssertEqual(partials.count, lines.count - 1, "every partial is a JSON value")
    for partial in partials {
      guard case .object = partial else { return XCTFail("a partial that is not an object: \(partial)") }
    }
    // The object so far: the last partial is the whole answer, a Recipe.
    guard case .object(let last)? = partials.last else { return XCTFail("no partial") }
    XCTAssertEqual(Set(last.keys), ["title", "minutes", "vegetarian", "ingredients"])
  }
}

extension StructuredContractSnippetTests {
  /// Runs the snippet, and again (three times at most) when the model's
  /// answer was cut. The snippet samples with a random seed, and about one
  /// run in fifteen SmolLM2 loops inside a string ("PremisePremise...")
  /// until the window is full: the answer is not JSON, and the library says
  /// so (`invalidStructuredOutput`, which nothing else in this run throws).
  /// That error is the model's; any other one fails the test at once.
  fileprivate static func runSnippet() async throws -> (SnippetResults, SnippetOutput) {
    var attempt = 1
    while true {
      let output = SnippetOutput()
      do {
        return (try await SnippetOutput.$current.withValue(output) { try await structuredOutputSnippet() }, output)
      } catch HybridInferenceError.invalidStructuredOutput(let why) where attempt < 3 {
        Swift.print("StructuredContractSnippetTests: attempt \(attempt), the model's answer was cut: \(why.prefix(160))")
        attempt += 1
      }
    }
  }
}

/// What the snippet returns: its two structured answers.
private typealias SnippetResults = (
  recipe: GenerativeModelSession.StructuredResponse<Recipe>,
  any: GenerativeModelSession.StructuredResponse<JSONValue>
)

/// The snippet's `print` (it shadows the standard library's in this file).
private func print(_ items: Any...) {
  SnippetOutput.current?.record(items)
}

// ---- the second contract snippet, verbatim (the structured-output part; the import is at the top) ----
// Structured output: any Decodable struct; the schema is derived from its Decodable
// conformance (no macros), or written by hand.
struct Recipe: Generable {
  var title: String
  var minutes: Int
  var vegetarian: Bool
  var ingredients: [String]
  // Optional: descriptions the model sees.
  static let generationSchema = GenerationSchema(deriving: Recipe.self,
                                                 descriptions: ["minutes": "Total time in minutes"])
}
// ---- (the snippet's statements continue in the function below) ----

private func structuredOutputSnippet() async throws -> SnippetResults {
  // The first snippet's `local` and `cloud`; this cloud must never be needed (port 9 is closed).
  let local = LocalSystemModel.default
  let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite", apiKey: "unused",
                               baseURL: URL(string: "http://127.0.0.1:9"))
  // ---- the second contract snippet, verbatim ----
  let session = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud))
  let recipe = try await session.respond(to: "A quick pancake recipe", generating: Recipe.self)
  print(recipe.content.title, recipe.rawResponse.modelVersion)   // recipe.content: Recipe
  for try await partial in session.streamResponse(to: "A pancake recipe", generating: Recipe.self) {
    print(partial.content)                     // JSONValue: the object so far, always valid JSON
  }
  let dynamic = try GenerationSchema(jsonSchema: #"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#)
  let any = try await session.respond(to: "Pick a number", schema: dynamic)   // any.content: JSONValue
  // ---- end of the snippet ----
  return (recipe, any)
}
