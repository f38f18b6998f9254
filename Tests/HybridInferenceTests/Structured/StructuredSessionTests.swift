import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The session's structured API over scripted models: decoding, the
/// transcript, partial snapshots, fallback on an undecodable device answer.
final class StructuredSessionTests: XCTestCase {
  struct Recipe: Generable, Equatable {
    var title: String
    var minutes: Int
    var vegetarian: Bool
    var ingredients: [String]
  }

  private let recipeText =
    #"{"title":"Pancakes \"quick\"","minutes":15,"vegetarian":true,"ingredients":["flour","milk"]}"#

  func testRespondGeneratingDecodesAndRecordsTheJSONText() async throws {
    let model = ScriptedModel("device", placement: .onDevice, script: [.answer([recipeText])])
    let session = GenerativeModelSession(model: model)
    let recipe = try await session.respond(to: "pancakes", generating: Recipe.self)
    XCTAssertEqual(recipe.content.title, "Pancakes \"quick\"")
    XCTAssertEqual(recipe.content.ingredients, ["flour", "milk"])
    XCTAssertEqual(recipe.jsonText, recipeText)
    XCTAssertEqual(session.transcript.entries.last?.text, recipeText)
    XCTAssertEqual(model.requests.first?.responseSchema, Recipe.generationSchema)
  }

  func testRespondWithDynamicSchemaGivesJSONValue() async throws {
    let schema = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#)
    let session = GenerativeModelSession(
      model: ScriptedModel("cloud", placement: .cloud, script: [.answer([#"{"n":"#, "42}"])]))
    let answer = try await session.respond(to: "Pick a number", schema: schema)
    XCTAssertEqual(answer.content, .object(["n": .number(42)]))
  }

  func testUndecodableDeviceAnswerFallsBackToTheCloudWithTheSchema() async throws {
    let device = ScriptedModel("device", placement: .onDevice, script: [.answer([#"{"title":1}"#])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer([recipeText])])
    let records = Locked<[LogRecord]>([])
    // The device answer is checked where it is produced: a checking wrapper
    // stands in for LocalSystemModel's own check (tested in the Local suite).
    let hybrid = GenerativeModelSession(
      model: .hybridModel(primary: SchemaCheckingModel(base: device), secondary: cloud),
      logHandler: LogHandler { record in records.withLock { $0.append(record) } })
    let recipe = try await hybrid.respond(to: "pancakes", generating: Recipe.self)
    XCTAssertEqual(recipe.rawResponse.modelVersion, "cloud")
    XCTAssertEqual(cloud.requests.first?.responseSchema, Recipe.generationSchema)
    XCTAssertFalse(records.withLock { $0 }.isEmpty, "the fallback is logged")
  }

  func testCloudAnswerThatDoesNotDecodeIsATypedErrorAndNotRecorded() async throws {
    let session = GenerativeModelSession(
      model: ScriptedModel("cloud", placement: .cloud, script: [.answer([#"{"title":"x"}"#])]))
    let error = await captureError { try await session.respond(to: "p", generating: Recipe.self) }
    guard case .invalidStructuredOutput? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testStreamingSnapshotsAlwaysParseAndTheLastEqualsTheFinalValue() async throws {
    let pieces = stride(from: 0, to: recipeText.count, by: 3).map { start -> String in
      let from = recipeText.index(recipeText.startIndex, offsetBy: start)
      let to = recipeText.index(from, offsetBy: min(3, recipeText.distance(from: from, to: recipeText.endIndex)))
      return String(recipeText[from..<to])
    }
    let session = GenerativeModelSession(
      model: ScriptedModel("device", placement: .onDevice, script: [.answer(pieces), .answer(pieces)]))
    var snapshots: [JSONValue] = []
    for try await snapshot in session.streamResponse(to: "pancakes", generating: Recipe.self) {
      let text = String(decoding: try JSONEncoder().encode(snapshot.content), as: UTF8.self)
      XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(text.utf8)), text)
      snapshots.append(snapshot.content)
    }
    XCTAssertGreaterThan(snapshots.count, 10)
    let final = try JSONDecoder().decode(JSONValue.self, from: Data(recipeText.utf8))
    XCTAssertEqual(snapshots.last, final)
    XCTAssertEqual(session.transcript.entries.last?.text, recipeText)
    let collected = try await session.streamResponse(to: "again", generating: Recipe.self).collect()
    XCTAssertEqual(collected.content.minutes, 15)
  }

  func testPartialParserClosesWhatIsOpen() throws {
    let cases: [(String, String)] = [
      (#"{"a":"he"#, #"{"a":"he"}"#), (#"{"a":1,"b":tr"#, #"{"a":1}"#), (#"{"a":[1,2"#, #"{"a":[1,2]}"#),
      (#"{"a":"x\"#, #"{"a":"x"}"#), (#"{"a"#, "{}"), (#"{"a":-"#, "{}"), (#"{"a":1.5e"#, #"{"a":1.5}"#),
      (#"[{"b":{"c":"\u00e"#, #"[{"b":{"c":""}}]"#),
    ]
    for (input, expected) in cases {
      XCTAssertEqual(try JSONPrefixParser.parsePrefix(input)?.jsonText, expected, input)
    }
    XCTAssertNil(try JSONPrefixParser.parsePrefix("  "))
    XCTAssertThrowsError(try JSONPrefixParser.parsePrefix("{]"))
    XCTAssertThrowsError(try JSONPrefixParser.parse(#"{"a":1} x"#))
  }

  func testCancelledStructuredStreamThrowsCancellation() async throws {
    let session = GenerativeModelSession(
      model: ScriptedModel("device", placement: .onDevice, script: [.answerThenHang([#"{"title":"Pan"#])]))
    let first = Locked<JSONValue?>(nil)
    let task = Task {
      for try await partial in session.streamResponse(to: "p", generating: Recipe.self) {
        first.withLock { $0 = $0 ?? partial.content }
      }
    }
    try await waitUntil { first.withLock { $0 != nil } }  // mid-answer: the model now hangs
    XCTAssertEqual(first.withLock { $0 }, .object(["title": .string("Pan")]))
    task.cancel()
    let result = await task.result
    XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
  }
}
