import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Option values and schema numbers that reach llama.cpp's C types: refused
/// with a typed error when they make no sense, clamped when they are merely
/// large (`LocalSystemModel+Settings`, `SchemaGrammar`). What used to trap is
/// in `HostileInputTests`, in child processes.
final class LocalOptionLimitsTests: XCTestCase {
  private let brief = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 2))

  /// Before: 0 and negative threads, batch sizes and parallel requests were
  /// silently made 1, and a context size of 0 reached llama.cpp (which took
  /// the trained length).
  func testZeroOrNegativeSizes_areInvalidOptions_naming_theSetting() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let models: [(String, LocalSystemModel)] = [
      ("contextSize", LocalSystemModel(modelPath: path, contextSize: 0, threads: 2)),
      ("contextSize", LocalSystemModel(modelPath: path, contextSize: -512, threads: 2)),
      ("batchSize", LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, batchSize: 0)),
      ("threads", LocalSystemModel(modelPath: path, contextSize: 256, threads: 0)),
      ("threads", LocalSystemModel(modelPath: path, contextSize: 256, threads: -4)),
      ("parallelRequests", LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, parallelRequests: 0)),
    ]
    for (name, model) in models {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      do {
        _ = try await session.respond(to: "Hi", options: brief)
        XCTFail("\(name) must be refused")
      } catch HybridInferenceError.invalidOptions(let why) {
        XCTAssertTrue(why.contains("LocalSystemModel.\(name) must be > 0"), why)
      }
      do {
        try await model.prepare()
        XCTFail("\(name) must be refused by prepare()")
      } catch HybridInferenceError.invalidOptions {
      }
      XCTAssertNil(model.batchedContext, "nothing was made for \(name)")
    }
  }

  /// Before: an infinite temperature was accepted (`!(t >= 0)` lets +inf through).
  func testNonFiniteTemperature_isInvalidOptions() async throws {
    let model = try LocalTestModels.tiny()
    for temperature in [Double.infinity, -.infinity, .nan, -0.5] {
      let request = ModelRequest(
        transcript: Transcript(entries: [.prompt("Hi")]),
        options: .foundationModels(GenerationOptions(temperature: temperature, maximumResponseTokens: 2)))
      do {
        _ = try await model.respond(to: request)
        XCTFail("temperature \(temperature) must be refused")
      } catch HybridInferenceError.invalidOptions(let why) {
        XCTAssertTrue(why.contains("temperature"), why)
      }
    }
  }

  /// A limit the window cannot hold means "until the window is full"; one it
  /// can hold but this conversation leaves no room for is still refused up front.
  func testResponseLimitLargerThanTheWindow_isNotAReservation() async throws {
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(contextSize: 256), logHandler: .silent)
    let response = try await session.respond(
      to: "Hi", options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 100_000)))
    XCTAssertEqual(response.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    do {
      _ = try await GenerativeModelSession(model: try LocalTestModels.tiny(contextSize: 256), logHandler: .silent)
        .respond(to: "Hi", options: .foundationModels(GenerationOptions(maximumResponseTokens: 250)))
      XCTFail("250 tokens fit no 256-token window after a prompt")
    } catch HybridInferenceError.contextWindowExceeded(let size, _) {
      XCTAssertEqual(size, 256)
    }
  }

  /// Before: 2.5 became 2, a negative or textual bound was ignored or made an
  /// invalid grammar, and a maximum below the minimum of a string went unseen.
  func testSchemaBounds_mustBeNonNegativeIntegers() throws {
    let cases: [(String, String)] = [
      (#"{"type":"string","minLength":2.5}"#, "minLength must be a non-negative integer, got 2.5"),
      (#"{"type":"string","maxLength":-1}"#, "maxLength must be a non-negative integer, got -1"),
      (#"{"type":"string","maxLength":"12"}"#, "maxLength must be a non-negative integer"),
      (#"{"type":"string","minLength":5,"maxLength":3}"#, "maxLength 3 is below minLength 5"),
      (#"{"type":"array","maxItems":1,"minItems":2}"#, "maxItems 1 is below minItems 2"),
      (#"{"type":"string","minLength":5000}"#, "minLength 5000 is more than the device produces (at most 4096)"),
    ]
    for (property, expected) in cases {
      let schema = try GenerationSchema(
        jsonSchema: #"{"type":"object","properties":{"name":"# + property + #"},"required":["name"]}"#)
      XCTAssertThrowsError(try SchemaGrammar.gbnf(for: schema), property) { error in
        guard case HybridInferenceError.unsupportedSchema(let path, let reason) = error else {
          return XCTFail("\(property): \(error)")
        }
        XCTAssertEqual(path, "$.name", property)
        XCTAssertTrue(reason.contains(expected), "\(property): \(reason)")
      }
    }
    let infinite = try GenerationSchema(
      jsonSchema: JSONValue.object(["type": .string("string"), "maxLength": .number(.infinity)]))
    XCTAssertThrowsError(try SchemaGrammar.gbnf(for: infinite))
  }

  func testLargeSchemaMaximums_areClampedToWhatTheDeviceProduces() throws {
    let schema = try GenerationSchema(
      jsonSchema: #"{"type":"array","items":{"type":"string","maxLength":100000},"maxItems":1e6,"minItems":4096}"#)
    let grammar = try SchemaGrammar.gbnf(for: schema)
    XCTAssertTrue(grammar.contains("char{0,4096}"), grammar)
    XCTAssertTrue(grammar.contains("{4095,4095}"), grammar)
  }

  /// A bound written as an integer beyond 2^53 is read exactly (`.exactInteger`):
  /// a maximum clamps as any large one does, a minimum is more than the device
  /// produces, a negative one is refused. Before, all three were "not an integer".
  func testSchemaBoundsBeyondTwoToTheFiftyThird_clampOrAreRefused() throws {
    let big = "100000000000000000000"
    let clamped = try GenerationSchema(jsonSchema: #"{"type":"string","maxLength":"# + big + "}")
    XCTAssertTrue(try SchemaGrammar.gbnf(for: clamped).contains("char{0,4096}"))
    for (property, expected) in [
      (#""minItems":"# + big, "is more than the device produces"),
      (#""minItems":-"# + big, "must be a non-negative integer"),
    ] {
      let schema = try GenerationSchema(jsonSchema: #"{"type":"array","items":{"type":"string"},"# + property + "}")
      XCTAssertThrowsError(try SchemaGrammar.gbnf(for: schema), property) { error in
        guard case HybridInferenceError.unsupportedSchema(_, let reason) = error else {
          return XCTFail("\(property): \(error)")
        }
        XCTAssertTrue(reason.contains(expected), "\(property): \(reason)")
      }
    }
  }
}
