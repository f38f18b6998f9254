import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The session's tool loop on scripted models: rounds, concurrency, errors,
/// cancellation and the fallback rule.
final class ToolLoopTests: XCTestCase {
  private func device(_ steps: ScriptedModel.Step...) -> ScriptedModel {
    ScriptedModel("device", placement: .onDevice, script: steps)
  }

  private func cloud(_ steps: ScriptedModel.Step...) -> ScriptedModel {
    ScriptedModel("cloud", placement: .cloud, script: steps)
  }

  func testToolRunsWithDecodedArguments_andTheFinalTextFollows() async throws {
    let weather = WeatherTool()
    let model = cloud(.calls([weatherCall("Paris", id: "c1")]), .answer(["It is ", "sunny."]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let answer = try await session.respond(to: "Weather in Paris?")
    XCTAssertEqual(answer.content, "It is sunny.")
    XCTAssertEqual(weather.log.all.map(\.arguments), ["Paris"])
    let entries = session.transcript.entries
    XCTAssertEqual(entries.count, 4)
    XCTAssertEqual(entries[1].toolCalls.map(\.name), ["get_weather"])
    XCTAssertEqual(entries[1].toolCalls.first?.id, "c1")
    XCTAssertEqual(entries[1].toolCalls.first?.argumentsJSON, #"{"city":"Paris"}"#)
    XCTAssertEqual(entries[2].toolOutputs.first?.outputText, "Sunny, 21 °C in Paris")
    XCTAssertEqual(entries[2].toolOutputs.first?.id, "c1")
    XCTAssertEqual(entries[3].text, "It is sunny.")
    // The second round carried the call and its output.
    let second = try XCTUnwrap(model.requests.last)
    XCTAssertEqual(second.transcript.entries.count, 3)
    XCTAssertEqual(second.tools.map(\.name), ["get_weather"])
  }

  func testParallelCallsOfOneRoundRunConcurrently() async throws {
    let weather = WeatherTool(delay: .milliseconds(300))
    let model = cloud(.calls([weatherCall("Paris"), weatherCall("Rome"), weatherCall("Oslo")]), .answer(["ok"]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    _ = try await session.respond(to: "Three cities")
    let calls = weather.log.all
    XCTAssertEqual(Set(calls.map(\.arguments)), ["Paris", "Rome", "Oslo"])
    // Every call started before any call ended: they overlapped.
    let lastStart = try XCTUnwrap(calls.map(\.start).max())
    let firstEnd = try XCTUnwrap(calls.compactMap(\.end).min())
    XCTAssertLessThan(lastStart, firstEnd, "the calls of one round ran one after another")
    // Outputs go back in the calls' order, whatever order the tools finished in.
    let outputs = session.transcript.entries[2].toolOutputs.map(\.outputText)
    XCTAssertEqual(outputs, ["Paris", "Rome", "Oslo"].map { "Sunny, 21 °C in \($0)" })
  }

  func testThrowingTool_endsWithToolFailedNamingTheTool() async throws {
    let model = cloud(.calls([Part.FunctionCall(name: "broken", args: .object(["city": .string("x")]))]))
    let session = GenerativeModelSession(model: model, tools: [BrokenTool()], logHandler: .silent)
    let error = await captureError { try await session.respond(to: "Go") }
    guard case .toolFailed(let name, let underlying)? = error as? HybridInferenceError else {
      return XCTFail("expected toolFailed, got \(String(describing: error))")
    }
    XCTAssertEqual(name, "broken")
    XCTAssertEqual(underlying as? ToolTestError, .broken)
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testUndecodableArguments_goBackOnceAsAnErrorOutput() async throws {
    let weather = WeatherTool()
    let bad = Part.FunctionCall(name: "get_weather", args: .object(["town": .string("Paris")]))
    let model = cloud(.calls([bad]), .calls([weatherCall("Paris")]), .answer(["Sunny."]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let answer = try await session.respond(to: "Weather?")
    XCTAssertEqual(answer.content, "Sunny.")
    let firstOutput = try XCTUnwrap(session.transcript.entries[2].toolOutputs.first)
    XCTAssertTrue(firstOutput.isError, firstOutput.outputText)
    XCTAssertTrue(firstOutput.outputText.contains("city"), firstOutput.outputText)
    XCTAssertEqual(weather.log.all.map(\.arguments), ["Paris"], "the tool never saw the bad arguments")
  }

  func testUndecodableArguments_twice_isATypedError() async throws {
    let weather = WeatherTool()
    let bad = Part.FunctionCall(name: "get_weather", args: .object(["city": .number(3)]))
    let model = cloud(.calls([bad]), .calls([bad]), .answer(["never"]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let error = await captureError { try await session.respond(to: "Weather?") }
    guard case .invalidToolCall(let name, _)? = error as? HybridInferenceError else {
      return XCTFail("expected invalidToolCall, got \(String(describing: error))")
    }
    XCTAssertEqual(name, "get_weather")
    XCTAssertTrue(weather.log.all.isEmpty)
    XCTAssertEqual(model.requests.count, 2)
  }

  func testTooManyRounds_isATypedErrorAtTheLimit() async throws {
    let weather = WeatherTool()
    let model = cloud(.calls([weatherCall("A")]), .calls([weatherCall("B")]), .calls([weatherCall("C")]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let error = await captureError {
      try await session.respond(to: "Loop", options: HybridGenerationOptions(maximumToolRounds: 2))
    }
    guard case .tooManyToolRounds(let limit)? = error as? HybridInferenceError else {
      return XCTFail("expected tooManyToolRounds, got \(String(describing: error))")
    }
    XCTAssertEqual(limit, 2)
    XCTAssertEqual(weather.log.all.map(\.arguments), ["A", "B"])
  }

  func testFiveThousandCallsInOneRound_endInATypedErrorBeforeAnyToolRuns() async throws {
    let weather = WeatherTool()
    let model = cloud(.calls((0..<5_000).map { weatherCall("City \($0)") }), .answer(["never"]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let error = await captureError { try await session.respond(to: "Everywhere") }
    guard case .tooManyToolCalls(let count, let limit)? = error as? HybridInferenceError else {
      return XCTFail("expected tooManyToolCalls, got \(String(describing: error))")
    }
    XCTAssertEqual(count, 5_000)
    XCTAssertEqual(limit, HybridGenerationOptions.defaultMaximumToolCallsPerRound)
    XCTAssertTrue(weather.log.all.isEmpty, "the tool ran \(weather.log.all.count) times")
    XCTAssertEqual(model.requests.count, 1)
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testCallLimitIsPerRound_onStreamsToo_andAtLeastOne() async throws {
    XCTAssertEqual(HybridGenerationOptions.default.maximumToolCallsPerRound, 32)
    let weather = WeatherTool()
    let model = cloud(
      .calls([weatherCall("A"), weatherCall("B")]), .calls([weatherCall("C"), weatherCall("D"), weatherCall("E")]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let options = HybridGenerationOptions(maximumToolCallsPerRound: 2)
    let error = await captureError { try await session.streamResponse(to: "Go", options: options).collect() }
    guard case .tooManyToolCalls(3, 2)? = error as? HybridInferenceError else {
      return XCTFail("expected tooManyToolCalls(3, 2), got \(String(describing: error))")
    }
    XCTAssertEqual(
      Set(weather.log.all.map(\.arguments)), ["A", "B"], "the round within the limit ran, the next did not")
    let invalid = await captureError {
      try await session.respond(to: "x", options: HybridGenerationOptions(maximumToolCallsPerRound: 0))
    }
    guard case .invalidOptions? = invalid as? HybridInferenceError else {
      return XCTFail("expected invalidOptions, got \(String(describing: invalid))")
    }
  }

  func testDefaultRoundLimitIsEight() async throws {
    XCTAssertEqual(HybridGenerationOptions.default.maximumToolRounds, 8)
    let session = GenerativeModelSession(model: cloud(), tools: [WeatherTool()], logHandler: .silent)
    let error = await captureError {
      try await session.respond(to: "x", options: HybridGenerationOptions(maximumToolRounds: 0))
    }
    guard case .invalidOptions? = error as? HybridInferenceError else {
      return XCTFail("expected invalidOptions, got \(String(describing: error))")
    }
  }

  func testCancellationDuringAToolCall_cancelsTheToolsTask() async throws {
    let hanging = HangingTool()
    let model = cloud(.calls([Part.FunctionCall(name: "hang", args: .object(["city": .string("x")]))]))
    let session = GenerativeModelSession(model: model, tools: [hanging], logHandler: .silent)
    let task = Task { try await session.respond(to: "Hang") }
    while hanging.log.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
    task.cancel()
    let error = await captureError { try await task.value }
    XCTAssertTrue(error is CancellationError, "\(String(describing: error))")
    let call = try XCTUnwrap(hanging.log.all.first)
    XCTAssertNotNil(call.end, "the tool is still running")
    XCTAssertTrue(call.cancelled, "the tool's task was not cancelled")
    XCTAssertFalse(session.isResponding)
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testAfterAToolRan_aFailureThrowsInsteadOfFallingBack() async throws {
    let weather = WeatherTool()
    let local = device(.calls([weatherCall("Paris")]), .fail(ScriptedError.decode))
    let remote = cloud(.answer(["cloud answer"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: remote), tools: [weather], logHandler: .silent)
    let error = await captureError { try await session.respond(to: "Weather?") }
    guard case .generationFailed? = error as? HybridInferenceError else {
      return XCTFail("expected the device's own error, got \(String(describing: error))")
    }
    XCTAssertEqual(weather.log.all.count, 1, "the tool ran once")
    XCTAssertTrue(remote.requests.isEmpty, "the cloud was asked after a tool had run")
  }

  func testHybridFallsBackBeforeAnyToolRan_andStaysOnTheModelThatCalled() async throws {
    let weather = WeatherTool()
    let local = device(.fail(HybridInferenceError.unsupportedRequest("no tool template")), .answer(["device"]))
    let remote = cloud(.calls([weatherCall("Paris")]), .answer(["cloud answer"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: remote), tools: [weather], logHandler: .silent)
    let answer = try await session.respond(to: "Weather?")
    XCTAssertEqual(answer.content, "cloud answer")
    XCTAssertEqual(local.requests.count, 1, "the second round went back to the device")
    XCTAssertEqual(remote.requests.count, 2)
  }

  func testRequiredChoice_appliesToTheFirstRoundOnly() async throws {
    let model = cloud(.calls([weatherCall("Paris")]), .answer(["ok"]))
    let session = GenerativeModelSession(model: model, tools: [WeatherTool()], logHandler: .silent)
    _ = try await session.respond(to: "Weather?", options: HybridGenerationOptions(toolChoice: .named("get_weather")))
    XCTAssertEqual(model.requests.map(\.options.toolChoice), [.named("get_weather"), .auto])
    XCTAssertEqual(model.requests.first?.offeredTools.map(\.name), ["get_weather"])
  }

  func testStreamYieldsTextOnlyAfterTheLastRound() async throws {
    let weather = WeatherTool()
    let model = cloud(.calls([weatherCall("Paris")]), .answer(["Sun", "ny."]))
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    var snapshots: [(String, ContinuousClock.Instant)] = []
    for try await snapshot in session.streamResponse(to: "Weather?") { snapshots.append((snapshot.content, .now)) }
    XCTAssertEqual(snapshots.first?.0, "Sun")
    XCTAssertEqual(snapshots.last?.0, "Sunny.")
    XCTAssertTrue(snapshots.allSatisfy { "Sunny.".hasPrefix($0.0) }, "\(snapshots.map(\.0))")
    let toolEnd = try XCTUnwrap(weather.log.all.first?.end)
    XCTAssertTrue(snapshots.allSatisfy { $0.1 > toolEnd }, "a snapshot came before the tool ran")
    XCTAssertEqual(session.transcript.entries.count, 4)
  }

  func testDuplicateToolNames_areRefusedBeforeAnythingIsSent() async throws {
    let model = cloud()
    let session = GenerativeModelSession(model: model, tools: [WeatherTool(), WeatherTool()], logHandler: .silent)
    let error = await captureError { try await session.respond(to: "x") }
    guard case .invalidOptions? = error as? HybridInferenceError else {
      return XCTFail("expected invalidOptions, got \(String(describing: error))")
    }
    XCTAssertTrue(model.requests.isEmpty)
  }
}
