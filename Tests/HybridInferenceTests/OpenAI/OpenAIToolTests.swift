import Foundation
import OpenAIServers
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Tools through the OpenAI-compatible protocol: the wire (`tools`,
/// `tool_choice`, an assistant's `tool_calls`, `tool` messages, streamed
/// call fragments) and the session's loop against a real llama-server.
final class OpenAIToolTests: XCTestCase {
  func testToolsAndAnEarlierRound_mapToTheProtocol() throws {
    let weather = ToolDeclaration(
      name: "get_weather", description: "The weather.", parameters: CityArguments.generationSchema)
    let clock = ToolDeclaration(
      name: "time", description: "The time.", parameters: try GenerationSchema(jsonSchema: #"{"type":"object"}"#))
    let calls = Content(
      role: "model",
      parts: [
        Part(text: "Let me look."),
        Part(functionCall: Part.FunctionCall(id: "c7", name: "get_weather", args: .object(["city": .string("Paris")]))),
        Part(functionCall: Part.FunctionCall(name: "time", args: nil)),
      ])
    let transcript = Transcript(
      entries: [
        .prompt("Weather and time?"), .response(calls, modelVersion: "gemini-x"),
        .toolOutputs([.output("12:00", name: "time", id: nil), .output("Sunny", name: "get_weather", id: "c7")]),
      ])
    let request = ModelRequest(
      transcript: transcript, options: HybridGenerationOptions(toolChoice: .named("get_weather")),
      tools: [weather, clock])
    let body = try XCTUnwrap(
      JSONSerialization.jsonObject(
        with: RequestBodyEncoder.encode(ChatCompletionRequest(request, model: "m", stream: false)))
        as? [String: Any])
    let tools = try XCTUnwrap(body["tools"] as? [[String: Any]])
    XCTAssertEqual(tools.count, 1, "only the named tool is offered")
    let function = try XCTUnwrap(tools.first?["function"] as? [String: Any])
    XCTAssertEqual(function["name"] as? String, "get_weather")
    XCTAssertEqual((function["parameters"] as? [String: Any])?["type"] as? String, "object")
    XCTAssertEqual(
      (body["tool_choice"] as? [String: Any])?["function"] as? [String: String], ["name": "get_weather"])

    let messages = try XCTUnwrap(body["messages"] as? [[String: Any]])
    XCTAssertEqual(messages.map { $0["role"] as? String }, ["user", "assistant", "tool", "tool"])
    XCTAssertEqual(messages[1]["content"] as? String, "Let me look.")
    let wireCalls = try XCTUnwrap(messages[1]["tool_calls"] as? [[String: Any]])
    XCTAssertEqual(wireCalls.map { $0["id"] as? String }, ["c7", "call_1"])
    let arguments = try XCTUnwrap((wireCalls[0]["function"] as? [String: Any])?["arguments"] as? String)
    XCTAssertEqual(arguments, #"{"city":"Paris"}"#, "arguments travel as a JSON string")
    XCTAssertEqual((wireCalls[1]["function"] as? [String: Any])?["arguments"] as? String, "{}")
    XCTAssertEqual(messages[2]["tool_call_id"] as? String, "call_1", "an id-less call and its output share one id")
    XCTAssertEqual(messages[2]["content"] as? String, "12:00")
    XCTAssertEqual(messages[3]["tool_call_id"] as? String, "c7")

    let required = ModelRequest(
      transcript: transcript, options: HybridGenerationOptions(toolChoice: .required), tools: [weather, clock])
    let requiredBody = try XCTUnwrap(
      JSONSerialization.jsonObject(
        with: RequestBodyEncoder.encode(ChatCompletionRequest(required, model: "m", stream: false)))
        as? [String: Any])
    XCTAssertEqual(requiredBody["tool_choice"] as? String, "required")
    let none = ModelRequest(
      transcript: transcript, options: HybridGenerationOptions(toolChoice: .none), tools: [weather, clock])
    let noneBody = try XCTUnwrap(
      JSONSerialization.jsonObject(
        with: RequestBodyEncoder.encode(ChatCompletionRequest(none, model: "m", stream: false)))
        as? [String: Any])
    XCTAssertNil(noneBody["tools"])
    XCTAssertNil(noneBody["tool_choice"])
  }

  func testStreamedCallFragments_areDeliveredWhole() throws {
    let chunks = [
      #"{"model":"srv","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#,
      #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]}"#,
      #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"time","arguments":"{}"}}]}}]}"#,
      #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Oslo\"}"}}]}}]}"#,
      #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"]"}}]},"finish_reason":"tool_calls"}]}"#,
    ]
    var assembly = ToolCallAssembly()
    for text in chunks {
      var chunk = try JSONDecoder().decode(ChatCompletionResponse.self, from: Data(text.utf8))
      assembly.take(from: &chunk)
      XCTAssertTrue(chunk.response(fallbackModel: "m").functionCalls.isEmpty, "no call is passed on in pieces")
    }
    let calls = try XCTUnwrap(assembly.response(modelVersion: "srv")).functionCalls
    XCTAssertEqual(calls.map(\.name), ["get_weather", "time"])
    XCTAssertEqual(calls.map(\.id), ["a", "b"])
    XCTAssertEqual(calls[0].args, .string(#"{"city":"Oslo"}]"#), "not JSON: kept as text for the session's check")
    XCTAssertEqual(calls[1].args, .object([:]))
    XCTAssertEqual(ChatCompletionResponse.finishReason("tool_calls"), .stop)
  }

  // MARK: The session's loop over HTTP (the stub checks every request)

  func testTwoRoundToolLoop_overTheProtocol_unaryAndStreamed() async throws {
    let stub = try OpenAITestServers.stub()
    defer { stub.stop() }
    let model = OpenAICompatibleModel(
      name: "tools", baseURL: stub.openAIBaseURL, apiKey: nil, requestOptions: .fastTests, logHandler: .silent)
    let weather = WeatherTool()
    let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    let answer = try await session.respond(to: "What is the weather in Paris?")
    XCTAssertEqual(answer.content, "It is sunny in Paris.")
    XCTAssertEqual(weather.log.all.map(\.arguments), ["Paris"])
    let calls = session.transcript.entries.flatMap(\.toolCalls)
    XCTAssertEqual(calls.map(\.id), ["call_w1"])
    XCTAssertEqual(session.transcript.entries.flatMap(\.toolOutputs).map(\.outputText), ["Sunny, 21 °C in Paris"])

    let streamed = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
    var snapshots: [String] = []
    for try await snapshot in streamed.streamResponse(to: "And now, streamed?") {
      snapshots.append(snapshot.content)
    }
    XCTAssertEqual(snapshots.last, "It is sunny in Paris.")
    XCTAssertEqual(weather.log.all.map(\.arguments), ["Paris", "Paris"], "the call put together from its pieces ran")
  }
}
