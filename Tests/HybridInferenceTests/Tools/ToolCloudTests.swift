import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The tool loop against the loopback Gemini server (model `tools`, see
/// Tests/GeminiServer/gemini_tools.py), which checks every request it gets:
/// declarations, toolConfig, and that each earlier call came back unchanged
/// (id, arguments, thought signature) followed by its functionResponse.
final class ToolCloudTests: CloudTestCase {
  /// The argument value the server's schema example gives a string.
  private let example = "a \"quoted\" text, été"

  private func body(_ request: [String: Any]) throws -> [String: Any] {
    try XCTUnwrap(request["body"] as? [String: Any])
  }

  private func contents(_ request: [String: Any]) throws -> [[String: Any]] {
    try XCTUnwrap(try body(request)["contents"] as? [[String: Any]])
  }

  func testTwoRoundLoop_onLoopback_everyRequestBodyChecked() async throws {
    let model = "tools~rounds-2~" + uniqueID()
    let weather = WeatherTool()
    let agent = GenerativeModelSession(
      model: server.model(model), instructions: "You help travellers.", tools: [weather], logHandler: .silent)
    let answer = try await agent.respond(to: "What is the weather in Paris?")
    let output = "Sunny, 21 °C in \(example)"
    XCTAssertEqual(answer.content, "done: \(output) | \(output)")
    XCTAssertEqual(weather.log.all.map(\.arguments), [example, example])

    let requests = try await server.allRequests(model)
    XCTAssertEqual(requests.count, 3)
    for request in requests {
      let tools = try XCTUnwrap(try body(request)["tools"] as? [[String: Any]])
      let declaration = try XCTUnwrap((tools.first?["functionDeclarations"] as? [[String: Any]])?.first)
      XCTAssertEqual(declaration["name"] as? String, "get_weather")
      XCTAssertEqual(declaration["description"] as? String, "The current weather in a city.")
      let schema = try XCTUnwrap(declaration["parametersJsonSchema"] as? [String: Any])
      XCTAssertEqual(schema["type"] as? String, "object")
      XCTAssertEqual(schema["required"] as? [String], ["city"])
      XCTAssertNil(try body(request)["toolConfig"], "AUTO is Gemini's default and is not sent")
      XCTAssertEqual(
        (try body(request)["systemInstruction"] as? [String: Any]).map { "\($0)" }?.contains("travellers"), true)
    }
    XCTAssertEqual(try contents(requests[0]).count, 1)
    let second = try contents(requests[1])
    XCTAssertEqual(second.map { $0["role"] as? String }, ["user", "model", "user"])
    let modelParts = try XCTUnwrap(second[1]["parts"] as? [[String: Any]])
    XCTAssertEqual(modelParts.first?["thought"] as? Bool, true, "the thought part went back too")
    let call = try XCTUnwrap(modelParts.last)
    XCTAssertEqual(call["thoughtSignature"] as? String, "sig-1")
    let functionCall = try XCTUnwrap(call["functionCall"] as? [String: Any])
    XCTAssertEqual(functionCall["id"] as? String, "call-1-1")
    XCTAssertEqual((functionCall["args"] as? [String: Any])?["city"] as? String, example)
    let response = try XCTUnwrap((second[2]["parts"] as? [[String: Any]])?.first?["functionResponse"] as? [String: Any])
    XCTAssertEqual(response["id"] as? String, "call-1-1")
    XCTAssertEqual(response["name"] as? String, "get_weather")
    XCTAssertEqual((response["response"] as? [String: Any])?["output"] as? String, output)
    XCTAssertEqual(try contents(requests[2]).map { $0["role"] as? String }, ["user", "model", "user", "model", "user"])

    let entries = agent.transcript.entries
    XCTAssertEqual(entries.count, 6)
    XCTAssertEqual(entries[1].toolCalls.first?.id, "call-1-1")
    XCTAssertEqual(entries[1].content.parts.last?.thoughtSignature, "sig-1")
    XCTAssertEqual(entries[4].toolOutputs.first?.outputText, output)
  }

  func testStreamedTwoRoundLoop_yieldsOnlyTheFinalText() async throws {
    let model = "tools~calls-2~" + uniqueID()
    let weather = WeatherTool()
    let agent = GenerativeModelSession(model: server.model(model), tools: [weather], logHandler: .silent)
    let result = await collectSnapshots(agent.streamResponse(to: "Weather in two places?"))
    XCTAssertNil(result.error)
    let output = "Sunny, 21 °C in \(example)"
    let final = "done: \(output) | \(output)"
    XCTAssertEqual(result.snapshots.last?.content, final)
    XCTAssertTrue(result.snapshots.allSatisfy { final.hasPrefix($0.content) && !$0.content.isEmpty })
    XCTAssertEqual(weather.log.all.count, 2, "both calls of the round ran")
    let requests = try await server.allRequests(model)
    XCTAssertEqual(requests.count, 2)
    XCTAssertEqual(requests.map { $0["method"] as? String }, ["streamGenerateContent", "streamGenerateContent"])
  }

  func testRequiredChoice_isSentAsAnyWithTheAllowedNames_onTheFirstRoundOnly() async throws {
    let model = "tools~" + uniqueID()
    let agent = GenerativeModelSession(
      model: server.model(model), tools: [WeatherTool(), NowTool()], logHandler: .silent)
    _ = try await agent.respond(to: "Weather?", options: HybridGenerationOptions(toolChoice: .named("get_weather")))
    let requests = try await server.allRequests(model)
    XCTAssertEqual(requests.count, 2)
    let config = try XCTUnwrap(try body(requests[0])["toolConfig"] as? [String: Any])
    let calling = try XCTUnwrap(config["functionCallingConfig"] as? [String: Any])
    XCTAssertEqual(calling["mode"] as? String, "ANY")
    XCTAssertEqual(calling["allowedFunctionNames"] as? [String], ["get_weather"])
    XCTAssertNil(try body(requests[1])["toolConfig"])
  }

  func testNoneChoice_isSentAsNone_andNoToolRuns() async throws {
    let model = "tools~" + uniqueID()
    let weather = WeatherTool()
    let agent = GenerativeModelSession(model: server.model(model), tools: [weather], logHandler: .silent)
    let answer = try await agent.respond(to: "Weather?", options: HybridGenerationOptions(toolChoice: .none))
    XCTAssertEqual(answer.content, "done: ")
    XCTAssertTrue(weather.log.all.isEmpty)
    let request = try await server.lastRequest(model)
    let config = try XCTUnwrap(try body(request)["toolConfig"] as? [String: Any])
    XCTAssertEqual((config["functionCallingConfig"] as? [String: Any])?["mode"] as? String, "NONE")
  }

  /// The recorded function-call fixtures (a thinking model calling `now`):
  /// the call reaches the tool, and the next request carries the model's
  /// turn back with its thought signature byte for byte. The fixture calls
  /// again on every request, so the loop ends at its one-round limit.
  func testRecordedFunctionCallFixtures_replayThroughTheLoop() async throws {
    let files = try GeminiTestServer.requireFixtures().filter { $0.contains("function-call") }
    XCTAssertEqual(files.count, 2, "\(files)")
    for file in files {
      let model = "fixture-\(file)~\(uniqueID())"
      let now = NowTool()
      let agent = GenerativeModelSession(model: server.model(model), tools: [now], logHandler: .silent)
      let options = HybridGenerationOptions(maximumToolRounds: 1)
      let error: (any Error)?
      if file.hasPrefix("streaming-") {
        error = await collectSnapshots(agent.streamResponse(to: "Days until New Year's Eve?", options: options)).error
      } else {
        error = await captureError { try await agent.respond(to: "Days until New Year's Eve?", options: options) }
      }
      guard case .tooManyToolRounds(1)? = error as? HybridInferenceError else {
        XCTFail("\(file): expected tooManyToolRounds(1), got \(String(describing: error))")
        continue
      }
      XCTAssertEqual(now.log.all.count, 1, file)
      let recorded = try Self.recordedSignature(file)
      let requests = try await server.allRequests(model)
      XCTAssertEqual(requests.count, 2, file)
      let second = try contents(requests[1])
      let callParts = try XCTUnwrap(second[1]["parts"] as? [[String: Any]]).filter { $0["functionCall"] != nil }
      XCTAssertEqual(callParts.first?["thoughtSignature"] as? String, recorded, "\(file): signature changed")
      let response = try XCTUnwrap(
        (second[2]["parts"] as? [[String: Any]])?.first?["functionResponse"] as? [String: Any])
      XCTAssertEqual(response["name"] as? String, "now")
      XCTAssertNil(response["id"], "\(file): the API gave no id, so none is sent")
    }
  }

  /// The thought signature of the fixture's functionCall part, read with JSONSerialization.
  private static func recordedSignature(_ file: String) throws -> String {
    let url = GeminiTestServer.fixturesDirectory.appendingPathComponent("googleai/\(file)")
    let text = try String(contentsOf: url, encoding: .utf8)
    let events = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
    let documents =
      file.hasSuffix(".json")
      ? [text]
      : events.map { event in
        event.split(separator: "\n").filter { $0.hasPrefix("data:") }.map { $0.dropFirst(5) }.joined(separator: "\n")
      }.filter { !$0.isEmpty }
    for document in documents {
      let object = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any]
      let candidates = object?["candidates"] as? [[String: Any]] ?? []
      let parts = (candidates.first?["content"] as? [String: Any])?["parts"] as? [[String: Any]] ?? []
      if let signature = parts.first(where: { $0["functionCall"] != nil })?["thoughtSignature"] as? String {
        return signature
      }
    }
    // Every fixture this test reads was recorded with one: a skip here would hide a broken fixture.
    return try XCTUnwrap(nil as String?, "\(file) holds no signed function call")
  }
}
