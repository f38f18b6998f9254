// swift-format-ignore-file
// (The second contract snippet's tool lines below are kept byte for byte.)

import Foundation
import HybridInference
import TestPrerequisites
import XCTest

/// The tools part of the second contract snippet (kept byte for byte),
/// compiles against the library and runs twice: on the default model (the
/// cloud secondary is a closed port, so a fallback would fail the test), and
/// on the loopback Gemini server with the device switched off, where the
/// server calls `get_weather` and answers from its output.
final class ToolContractSnippetTests: XCTestCase {
  func testDesignToolSnippet_runsOnTheDefaultModel() async throws {
    guard LocalSystemModel.default.isAvailable else {
      throw Prerequisite.missing("the default model (run make test, which provisions it); the snippet compiled")
    }
    let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite", apiKey: "unused",
                                 baseURL: URL(string: "http://127.0.0.1:9"))
    // The default model's file in a 1,024-token window: the snippet sets no
    // limit, so the window is what bounds each round's answer (with 4,096 a
    // run took from under 1 s to 150 s).
    let local = LocalSystemModel(modelPath: LocalSystemModel.default.modelPath, contextSize: 1024)
    let (answer, agent) = try await toolSnippet(local: local, cloud: cloud)
    XCTAssertEqual(answer.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    let entries = agent.transcript.entries
    XCTAssertEqual(entries.first?.text, "What is the weather in Paris?")
    XCTAssertEqual(entries.last?.toolCalls.count, 0, "the turn ends in text")
    // The final text, after any tool ran (earlier rounds' text comes first).
    XCTAssertTrue(answer.content.hasSuffix(entries.last?.text ?? "\u{0}"), answer.content)
    // Whether the model calls the tool is its choice; each call it makes is
    // followed by the tool's output, as entries.
    for (call, outputs) in zip(entries, entries.dropFirst()) where !call.toolCalls.isEmpty {
      XCTAssertEqual(call.toolCalls.map(\.name), outputs.toolOutputs.map(\.name))
      for output in outputs.toolOutputs where !output.isError {
        XCTAssertTrue(output.outputText.hasPrefix("Sunny, 21 °C in "), output.outputText)
      }
    }
  }

  func testDesignToolSnippet_runsOnTheCloudLoop() async throws {
    let server = try GeminiTestServer()
    defer { server.stop() }
    let local = LocalSystemModel(modelPath: LocalTestModels.tinyPath, isEnabled: false)
    let (answer, agent) = try await toolSnippet(local: local, cloud: server.model("tools~" + uniqueID()))
    XCTAssertEqual(answer.content, "done: Sunny, 21 °C in a \"quoted\" text, été")
    let entries = agent.transcript.entries
    XCTAssertEqual(entries.map { $0.toolCalls.map(\.name) }, [[], ["get_weather"], [], []])
    XCTAssertEqual(entries[2].toolOutputs.first?.outputText, "Sunny, 21 °C in a \"quoted\" text, été")
  }
}

// ---- the second contract snippet, verbatim (the tools part) ----
// Tools: the model may call them; the session runs them and feeds the output back.
struct GetWeather: Tool {
  struct Arguments: Generable { var city: String }
  let name = "get_weather"
  let description = "The current weather in a city."
  func call(arguments: Arguments) async throws -> String { "Sunny, 21 °C in \(arguments.city)" }
}
// ---- (the snippet's statements continue in the function below) ----

private func toolSnippet(local: LocalSystemModel, cloud: CloudGeminiModel) async throws -> (
  GenerativeModelSession.Response, GenerativeModelSession
) {
  // ---- the second contract snippet, verbatim ----
  let agent = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud),
                                     instructions: "You help travellers.", tools: [GetWeather()])
  let answer = try await agent.respond(to: "What is the weather in Paris?")
  print(answer.content)                        // the final text, after the tool ran
  // agent.transcript holds the call (name, arguments) and the tool's output as entries.
  // ---- end of the snippet ----
  return (answer, agent)
}
