import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Tools on device: the tiny random-weight model (the loop and the grammar
/// mechanics, whatever it writes) and SmolLM2 (real calls), both through the
/// generic format, since neither template renders tools.
final class LocalToolTests: XCTestCase {
  private func options(_ choice: ToolChoice, tokens: Int = 400, seed: UInt64 = 1) -> HybridGenerationOptions {
    HybridGenerationOptions(
      foundationModels: GenerationOptions(sampling: .random(top: 40, seed: seed), maximumResponseTokens: tokens),
      toolChoice: choice)
  }

  func testTinyModel_forcedCall_runsTheToolWithDecodedArguments_thenTextFollows() async throws {
    let weather = WeatherTool()
    let session = GenerativeModelSession(
      model: try LocalTestModels.tiny(contextSize: 2048), tools: [weather], logHandler: .silent)
    let answer = try await session.respond(to: "Weather in Paris?", options: options(.required, tokens: 400))
    XCTAssertEqual(weather.log.all.count, 1, "the forced call ran the tool once")
    let entries = session.transcript.entries
    XCTAssertGreaterThanOrEqual(entries.count, 4)
    let call = try XCTUnwrap(entries[1].toolCalls.first)
    XCTAssertEqual(call.name, "get_weather")
    XCTAssertEqual(call.id?.count, 9)
    // The arguments the tool decoded are the ones the model wrote.
    let decoded = try JSONDecoder().decode(CityArguments.self, from: Data(call.argumentsJSON.utf8))
    XCTAssertEqual(weather.log.all.first?.arguments, decoded.city)
    XCTAssertEqual(entries[2].toolOutputs.first?.id, call.id)
    XCTAssertEqual(answer.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    XCTAssertTrue(answer.rawResponse.functionCalls.isEmpty, "the final round is text")
    XCTAssertEqual(entries.last?.text, answer.content)
  }

  func testTinyModel_streamedForcedCall_showsNoCallMarkup() async throws {
    let weather = WeatherTool()
    let session = GenerativeModelSession(
      model: try LocalTestModels.tiny(contextSize: 2048), tools: [weather], logHandler: .silent)
    var snapshots: [String] = []
    for try await snapshot in session.streamResponse(to: "Weather?", options: options(.required, tokens: 400)) {
      snapshots.append(snapshot.content)
    }
    XCTAssertEqual(weather.log.all.count, 1)
    XCTAssertFalse(snapshots.contains { $0.contains(#""arguments""#) }, "the call's JSON reached the caller")
    XCTAssertEqual(snapshots.last ?? "", session.transcript.entries.last?.text)
  }

  func testSmolLM2_requiredGetWeather_argumentsDecode_fiveOfFive() async throws {
    let model = try LocalTestModels.smol()
    let cities = ["Paris", "Tokyo", "Berlin", "Lima", "Cairo"]
    for (index, city) in cities.enumerated() {
      let weather = WeatherTool()
      let session = GenerativeModelSession(
        model: model, instructions: "You help travellers.", tools: [weather], logHandler: .silent)
      // The forced first call is what this measures: a 135M model sometimes
      // goes on calling in the free rounds after it, up to the round limit.
      do {
        _ = try await session.respond(
          to: "What is the weather in \(city)?", options: options(.required, tokens: 200, seed: UInt64(index + 1)))
      } catch HybridInferenceError.tooManyToolRounds {
        print("SmolLM2 kept calling get_weather for \(city) until the round limit")
      } catch {
        XCTFail("\(city): \(error)")
        continue
      }
      // The tool ran, so the arguments passed the schema and decoded into `CityArguments`.
      guard let first = weather.log.all.first else { return XCTFail("\(city): the tool did not run") }
      print("SmolLM2 get_weather for \(city): \(first.arguments)")
    }
  }

  func testDeviceWithoutAToolFormat_fallsBackToTheCloudBeforeAnyToolRan() async throws {
    let server = try GeminiTestServer()
    defer { server.stop() }
    let recorder = LogRecorder()
    let weather = WeatherTool()
    let local = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      allowsGenericToolFormat: false)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: server.model("tools~" + uniqueID())), tools: [weather],
      logHandler: recorder.handler)
    let answer = try await session.respond(to: "Weather?")
    XCTAssertTrue(answer.content.hasPrefix("done: "), answer.content)
    XCTAssertEqual(answer.rawResponse.modelVersion, "tools-model")
    XCTAssertEqual(weather.log.all.count, 1)
    XCTAssertEqual(recorder.fallbacks.count, 1, "one fallback, before the tool ran")
  }

  func testDeviceWhoseContextIsTooSmallForTheTools_fallsBackToTheCloud() async throws {
    let server = try GeminiTestServer()
    defer { server.stop() }
    let weather = WeatherTool()
    let local = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 64, threads: 2)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: server.model("tools~" + uniqueID())), tools: [weather],
      logHandler: .silent)
    let answer = try await session.respond(to: "Weather?")
    XCTAssertEqual(answer.rawResponse.modelVersion, "tools-model")
    XCTAssertEqual(weather.log.all.count, 1)
  }

  func testEveryCallGrammar_isAcceptedByLlamaCpp_forcedAndLazy() async throws {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let tools = [AnyTool(WeatherTool()).declaration, AnyTool(NowTool()).declaration]
    for syntax in ToolCallSyntax.allFamilies {
      let grammar = try ToolCallGrammar.gbnf(for: tools, syntax: syntax)
      XCTAssertNoThrow(try GrammarConstraint(grammar: grammar, model: model), "\(syntax) forced:\n\(grammar)")
      XCTAssertNoThrow(try GrammarConstraint(grammar: grammar, model: model, lazy: syntax), "\(syntax) lazy")
    }
  }
}
