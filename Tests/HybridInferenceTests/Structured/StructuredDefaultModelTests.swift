import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Structured output on the default model, SmolLM2-135M-Instruct: the grammar
/// makes even a 135M model answer in the schema's shape. A fixed seed and a
/// token bound, so the answers repeat and the suite stays quick. The grammar
/// alone cannot stop a runaway (greedy decoding repeats one ingredient), so
/// on device unbounded lists and strings are capped (`SchemaGrammar`), and the
/// token bound leaves room for a capped list to close on any CPU.
final class StructuredDefaultModelTests: XCTestCase {
  private let seeded = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .random(top: 40, seed: 1), temperature: 0.9, maximumResponseTokens: 768))

  func testRecipeFromFivePrompts_everyOneDecodes() async throws {
    let model = try LocalTestModels.smol()
    let prompts = [
      "A quick pancake recipe", "A vegetarian pasta dish for two", "How do I make a tomato soup?",
      "A chocolate cake recipe", "Something simple with rice and eggs",
    ]
    for prompt in prompts {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      do {
        let recipe = try await session.respond(to: prompt, generating: Recipe.self, options: seeded)
        XCTAssertEqual(recipe.rawResponse.modelVersion, LocalSystemModel.modelVersion)
        XCTAssertFalse(recipe.content.title.isEmpty, "\(prompt): \(recipe.jsonText)")
      } catch {
        XCTFail("\(prompt): \(error); \(String(reflecting: session.transcript.entries.last?.text))")
      }
    }
  }

  func testDynamicSchemaWithAnEnumAndANestedArray_decodes() async throws {
    let schema = try GenerationSchema(
      jsonSchema: #"""
        {"type":"object","properties":{
          "mood":{"type":"string","enum":["happy","sad","neutral"]},
          "steps":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{
            "action":{"type":"string","maxLength":40},
            "tools":{"type":"array","maxItems":3,"items":{"type":"string","maxLength":20}}},
            "required":["action","tools"]}}},
         "required":["mood","steps"]}
        """#)
    let session = GenerativeModelSession(model: try LocalTestModels.smol(), logHandler: .silent)
    let answer = try await session.respond(
      to: "Plan a relaxed morning in a few steps, with the tools each step needs.", schema: schema, options: seeded)
    guard case .string(let mood)? = answer.content["mood"], ["happy", "sad", "neutral"].contains(mood) else {
      return XCTFail("mood: \(answer.jsonText)")
    }
    guard case .array(let steps)? = answer.content["steps"], (1...3).contains(steps.count) else {
      return XCTFail("steps: \(answer.jsonText)")
    }
    for step in steps {
      guard case .array(let tools)? = step["tools"], tools.count <= 3 else {
        return XCTFail("tools: \(answer.jsonText)")
      }
    }
  }
}
