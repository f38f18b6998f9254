import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The device side: schema to GBNF, checked with llama.cpp's own grammar
/// engine on the tiny model's vocabulary, and constrained generation.
final class StructuredDeviceTests: XCTestCase {
  /// Whether llama.cpp's grammar (from `schema`) accepts `document` in full,
  /// feeding it token by token as generation would.
  private func accepts(_ schema: String, _ document: String, model: LlamaModel) throws -> Bool {
    let grammar = try SchemaGrammar.gbnf(for: GenerationSchema(jsonSchema: schema))
    let sampler = try XCTUnwrap(llama_sampler_init_grammar(model.vocab, grammar, "root"), grammar)
    defer { llama_sampler_free(sampler) }
    let tokens = try model.tokenize(document, addSpecial: false, parseSpecial: false)
    for token in tokens + [llama_vocab_eos(model.vocab)] {
      var candidate = llama_token_data(id: token, logit: 1, p: 0)
      let allowed = withUnsafeMutablePointer(to: &candidate) { pointer in
        var array = llama_token_data_array(data: pointer, size: 1, selected: -1, sorted: false)
        llama_sampler_apply(sampler, &array)
        return pointer.pointee.logit.isFinite
      }
      guard allowed else { return false }
      if token != llama_vocab_eos(model.vocab) { llama_sampler_accept(sampler, token) }
    }
    return true
  }

  func testGrammarsAcceptValidAndRejectInvalidDocuments() async throws {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let cases: [(schema: String, valid: [String], invalid: [String])] = [
      (
        #"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}"#,
        [#"{"a":"x"}"#, #"{ "a": "x", "b": -12}"#, #"{"a":"q\"uo\u00e9"}"#],
        [#"{"b":1}"#, #"{"b":1,"a":"x"}"#, #"{"a":1}"#, #"{"a":"x","c":1}"#, #"{"a":"x"} "#]
      ),
      (
        #"{"type":"object","properties":{"o":{"type":"boolean"},"r":{"type":"null"}}}"#,
        [#"{}"#, #"{"r":null}"#, #"{"o":true,"r":null}"#], [#"{"r":null,"o":true}"#, #"{,"r":null}"#]
      ),
      (
        #"{"type":"array","items":{"type":"number"},"minItems":1,"maxItems":2}"#,
        ["[1]", "[1.5e3, -0.25]"], ["[]", "[1,2,3]", "[01]", "[1.]"]
      ),
      (
        #"{"type":"string","enum":["red","green"]}"#, [#""red""#, #""green""#], [#""blue""#, "red"]
      ),
      (#"{"const":"fixed"}"#, [#""fixed""#], [#""other""#]),
      (
        #"{"type":"string","minLength":2,"maxLength":3}"#, [#""ab""#, #""abc""#], [#""a""#, #""abcd""#]
      ),
      (#"{"type":"string","minLength":2}"#, [#""ab""#, #""abcdef""#], [#""a""#, #""""#]),
      (
        #"{"anyOf":[{"type":"integer"},{"type":"string","enum":["none"]}]}"#, ["3", #""none""#],
        ["true", #""some""#]
      ),
      (
        #"{"$defs":{"p":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},"#
          + ##""type":"array","items":{"$ref":"#/$defs/p"}}"##,
        [#"[{"x":1},{"x":2}]"#, "[]"], [#"[{"y":1}]"#]
      ),
      (#"{"type":["string","null"]}"#, ["null", #""s""#], ["1"]),
    ]
    for (schema, valid, invalid) in cases {
      for document in valid {
        XCTAssertTrue(try accepts(schema, document, model: model), "\(schema) should accept \(document)")
      }
      for document in invalid {
        XCTAssertFalse(try accepts(schema, document, model: model), "\(schema) should reject \(document)")
      }
    }
  }

  func testPatternIsATypedUnsupportedError() throws {
    let schema = try GenerationSchema(jsonSchema: #"{"type":"string","pattern":"^[a-z]+$"}"#)
    XCTAssertThrowsError(try SchemaGrammar.gbnf(for: schema)) { error in
      guard case .unsupportedSchema? = error as? HybridInferenceError else { return XCTFail("\(error)") }
    }
  }

  struct Record: Generable {
    var name: String
    var count: Int
    var ok: Bool
    var tags: [Tag]
    enum Tag: String, Decodable, CaseIterable, Sendable {
      case alpha
      case beta
    }
    static let generationSchema = try! GenerationSchema(
      jsonSchema: #"""
        {"type":"object","properties":{"name":{"type":"string","maxLength":12},"count":{"type":"integer"},
        "ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","enum":["alpha","beta"]},"maxItems":3}},
        "required":["name","count","ok","tags"]}
        """#)
  }

  func testTinyModelConstrainedAlwaysDecodesOverFiftySeeds() async throws {
    // Room for the schema the prompt carries (SchemaPrompt) in the tiny vocabulary.
    let model = try LocalTestModels.tiny(contextSize: 1024)
    for seed in 0..<50 {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      let options = HybridGenerationOptions.foundationModels(
        GenerationOptions(sampling: .random(top: 40, seed: UInt64(seed)), maximumResponseTokens: 200))
      let record: GenerativeModelSession.StructuredResponse<Record>
      do {
        record = try await session.respond(to: "Describe a record", generating: Record.self, options: options)
      } catch {
        return XCTFail("seed \(seed): \(error); \(String(reflecting: session.transcript.entries.last?.text))")
      }
      XCTAssertLessThanOrEqual(record.content.tags.count, 3)
      // maxLength counted as the grammar counts it: well-formed UTF-8 only (UTF8ValidatorTests).
      XCTAssertLessThanOrEqual(record.content.name.unicodeScalars.count, 12, "seed \(seed)")
      XCTAssertFalse(record.jsonText.contains("\u{FFFD}"), "seed \(seed): \(record.jsonText)")
      XCTAssertNoThrow(try JSONPrefixParser.parse(record.jsonText))
    }
  }

  func testSchemaTheDeviceCannotServeFallsBackToTheCloudModel() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer([#""abc""#])])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: try LocalTestModels.tiny(), secondary: cloud), logHandler: .silent)
    let schema = try GenerationSchema(jsonSchema: #"{"type":"string","pattern":"^[a-z]+$"}"#)
    let answer = try await session.respond(to: "letters", schema: schema)
    XCTAssertEqual(answer.content, .string("abc"))
    XCTAssertEqual(cloud.requests.first?.responseSchema, schema)
  }
}
