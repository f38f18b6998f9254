import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// A session restored from a transcript goes on from it: the first request
/// carries every turn and the instructions, on either model of a hybrid.
final class RestoreTests: XCTestCase {
  /// A conversation as a first process leaves it: two turns, one with a tool round.
  private func savedConversation() async throws -> Data {
    let model = ScriptedModel("first", placement: .cloud)
    model.enqueue(
      .answer(["Hi."]),
      .calls([Part.FunctionCall(id: "c1", name: "get_weather", args: .object(["city": .string("Oslo")]))]),
      .answer(["Sunny in Oslo."]))
    let session = GenerativeModelSession(
      model: model, instructions: "You help travellers.", tools: [GetWeather()], logHandler: .silent)
    _ = try await session.respond(to: "Hello")
    _ = try await session.respond(to: "Weather in Oslo?")
    XCTAssertEqual(session.transcript.entries.count, 6)
    return try JSONEncoder().encode(session.transcript)
  }

  func testRestoredSession_sendsTheWholeHistoryAndTheInstructions() async throws {
    let saved = try JSONDecoder().decode(Transcript.self, from: try await savedConversation())
    let model = ScriptedModel("second", placement: .cloud)
    let session = GenerativeModelSession(model: model, transcript: saved, tools: [GetWeather()], logHandler: .silent)
    XCTAssertEqual(session.transcript, saved)
    let answer = try await session.respond(to: "And tomorrow?")
    XCTAssertEqual(answer.content, "second default")
    let sent = try XCTUnwrap(model.requests.first).transcript
    XCTAssertEqual(sent.instructions, "You help travellers.")
    XCTAssertEqual(Array(sent.entries.dropLast()), saved.entries)
    XCTAssertEqual(sent.entries.last?.text, "And tomorrow?")
    XCTAssertEqual(sent.entries.map { $0.toolCalls.map(\.name) }, [[], [], [], ["get_weather"], [], [], []])
    XCTAssertEqual(session.transcript.entries.count, saved.entries.count + 2)
  }

  func testRestoredSession_afterAFallback_theSecondaryGetsTheWholeHistory() async throws {
    let saved = try JSONDecoder().decode(Transcript.self, from: try await savedConversation())
    let local = ScriptedModel("local", placement: .onDevice, script: [.fail(ScriptedError.decode)])
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), transcript: saved, logHandler: .silent)
    let answer = try await session.streamResponse(to: "And tomorrow?").collect()
    XCTAssertEqual(answer.rawResponse.modelVersion, "cloud")
    for model in [local, cloud] {
      let sent = try XCTUnwrap(model.requests.first).transcript
      XCTAssertEqual(sent.instructions, "You help travellers.", model.modelVersion)
      XCTAssertEqual(Array(sent.entries.dropLast()), saved.entries, model.modelVersion)
    }
  }

  func testRestoredOnTheTinyDevice_theFirstTurnRendersTheHistory() async throws {
    let saved = try JSONDecoder().decode(Transcript.self, from: try await savedConversation())
    let local = try LocalTestModels.tiny(contextSize: 1024)
    let session = GenerativeModelSession(model: local, transcript: saved, logHandler: .silent)
    let options = HybridGenerationOptions.hybrid(
      gemini: nil, foundationModels: GenerationOptions(sampling: .greedy, maximumResponseTokens: 4))
    let answer = try await session.respond(to: "And tomorrow?", options: options)
    let prefilled = try XCTUnwrap(answer.rawResponse.usageMetadata?.promptTokenCount)
    var whole = saved
    whole.entries.append(.prompt("And tomorrow?"))
    let counted = try await local.promptTokenCount(for: ModelRequest(transcript: whole))
    XCTAssertEqual(prefilled, counted, "the device prefilled the whole restored conversation")
    let alone = try await local.promptTokenCount(
      for: ModelRequest(transcript: Transcript(entries: [.prompt("And tomorrow?")])))
    XCTAssertGreaterThan(prefilled, try XCTUnwrap(alone) + 20)
    XCTAssertEqual(answer.rawResponse.placement, .onDevice)
  }

  func testInstructionsInit_takesContextOverflowInItsPlace() {
    let session = GenerativeModelSession(
      model: ScriptedModel("m", placement: .cloud), instructions: "x", tools: [], contextOverflow: .dropOldestTurns,
      logHandler: .silent)
    XCTAssertEqual(session.contextOverflow, .dropOldestTurns)
    XCTAssertEqual(GenerativeModelSession(model: ScriptedModel("m", placement: .cloud)).contextOverflow, .fail)
  }
}
