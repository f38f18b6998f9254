import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Google's server-side tools (issue 24, point 3): declared on every request
/// beside the function declarations; grounding, URL context and code
/// execution reach the caller through the raw response and the transcript.
final class CloudServerToolTests: CloudTestCase {
  private let allTools: [ServerTool] = [.googleSearch(), .codeExecution(), .urlContext()]

  private func model(_ name: String, serverTools: [ServerTool]) -> CloudGeminiModel {
    CloudGeminiModel(
      name: name, apiKey: GeminiTestServer.apiKey, baseURL: server.baseURL, requestOptions: .fastTests,
      serverTools: serverTools, logHandler: .silent)
  }

  func testServerTools_areDeclaredOnEveryRequest_besideTheFunctions() async throws {
    let weather = ToolDeclaration(
      name: "get_weather", description: "The weather.",
      parameters: try GenerationSchema(jsonSchema: #"{"type":"object","properties":{"city":{"type":"string"}}}"#))
    let name = "grounded~\(uniqueID())"
    let model = model(name, serverTools: allTools + [.googleSearch()])
    _ = try await model.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("a")]), tools: [weather]))
    _ = try await model.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("b")])))
    let requests = try await server.allRequests(name)
    let withFunctions = try XCTUnwrap((requests[0]["body"] as? [String: Any])?["tools"] as? [[String: Any]])
    XCTAssertEqual(
      withFunctions.map { $0.keys.sorted() },
      [["functionDeclarations"], ["googleSearch"], ["codeExecution"], ["urlContext"]])
    XCTAssertEqual(withFunctions[1]["googleSearch"] as? [String: String], [:])
    let alone = try XCTUnwrap((requests[1]["body"] as? [String: Any])?["tools"] as? [[String: Any]])
    XCTAssertEqual(alone.map { $0.keys.sorted() }, [["googleSearch"], ["codeExecution"], ["urlContext"]])
    // Without them, nothing is declared, and the test server's `grounded` refuses (as a tool-less model cannot ground).
    let plain = self.model(name, serverTools: [])
    let error = await captureError {
      try await plain.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("c")])))
    }
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 400)
    let refused = try await server.lastRequest(name)
    XCTAssertNil((refused["body"] as? [String: Any])?["tools"])
  }

  func testGroundingURLContextAndCodeExecution_reachTheCaller_unaryAndStreamed() async throws {
    let session = GenerativeModelSession(model: model("grounded", serverTools: allTools), logHandler: .silent)
    let answer = try await session.respond(to: "why is the sky blue")
    let streamed = await collectSnapshots(session.streamResponse(to: "and the sea"))
    XCTAssertNil(streamed.error)
    for (label, raw) in [
      ("unary", answer.rawResponse), ("streamed", try XCTUnwrap(streamed.snapshots.last?.rawResponse)),
    ] {
      let candidate = try XCTUnwrap(raw.candidates.first, label)
      let grounding = try XCTUnwrap(candidate.groundingMetadata, label)
      XCTAssertTrue(grounding.searchEntryPoint?.renderedContent?.contains("class=\"chip\"") ?? false, label)
      XCTAssertEqual(grounding.webSearchQueries, ["why is the sky blue"], label)
      XCTAssertEqual(grounding.groundingChunks?.first?.web?.uri, "https://example.org/rayleigh", label)
      XCTAssertEqual(grounding.groundingSupports?.first?.groundingChunkIndices, [0], label)
      XCTAssertEqual(candidate.urlContextMetadata?.urlMetadata?.first?.urlRetrievalStatus, .success, label)
      let parts = candidate.content?.parts ?? []
      XCTAssertEqual(parts.compactMap(\.executableCode?.code), ["print(6 * 7)"], label)
      XCTAssertEqual(parts.compactMap(\.codeExecutionResult?.output), ["42\n"], label)
    }
    XCTAssertEqual(answer.content, "Grounded: why is the sky blue")
    // The transcript keeps the code parts, and sends them back on the next turn.
    let modelTurns = session.transcript.entries.filter { $0.role == .model }
    XCTAssertEqual(modelTurns.count, 2)
    for turn in modelTurns {
      XCTAssertTrue(turn.content.parts.contains { $0.executableCode != nil })
      XCTAssertTrue(turn.content.parts.contains { $0.codeExecutionResult != nil })
    }
    let last = try await server.lastRequest("grounded")
    let contents = try XCTUnwrap((last["body"] as? [String: Any])?["contents"] as? [[String: Any]])
    let sentBack = try XCTUnwrap(contents.first { $0["role"] as? String == "model" }?["parts"] as? [[String: Any]])
    XCTAssertTrue(sentBack.contains { $0["executableCode"] != nil })
  }

  func testGroundingOfAnOddShape_isLeftOut_notTheAnswer() throws {
    let json = #"""
      {"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP",
        "groundingMetadata":{"webSearchQueries":"not a list","searchEntryPoint":{"renderedContent":"<b>x</b>"}},
        "urlContextMetadata":{"urlMetadata":{"oops":1}}}],"modelVersion":"m"}
      """#
    let response = try JSONDecoder().decode(GenerateContentResponse.self, from: Data(json.utf8))
    XCTAssertEqual(response.text, "ok")
    XCTAssertNil(response.candidates.first?.groundingMetadata?.webSearchQueries)
    XCTAssertEqual(response.candidates.first?.groundingMetadata?.searchEntryPoint?.renderedContent, "<b>x</b>")
    XCTAssertNil(response.candidates.first?.urlContextMetadata?.urlMetadata)
  }
}
