import Foundation
import OpenAIServers
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The default model, SmolLM2-135M-Instruct, served by a real llama-server:
/// words that mean something, so the answer itself is checked, not only the
/// protocol (the tiny model's noise is enough for that).
final class OpenAIDefaultModelTests: XCTestCase {
  func testCapitalOfFrance_fromTheServer_containsParis() async throws {
    let server = try await OpenAITestServers.llamaServer(model: LocalTestModels.require(LocalTestModels.defaultPath))
    defer { server.stop() }
    let fleet = OpenAICompatibleModel(
      name: "smollm2", baseURL: server.baseURL, apiKey: nil, requestOptions: .fastTests, logHandler: .silent)
    let session = GenerativeModelSession(
      model: fleet, instructions: "You are a helpful assistant.", logHandler: .silent)
    let greedy = HybridGenerationOptions.gemini(GenerationConfig(temperature: 0, maxOutputTokens: 48))
    let answer = try await session.respond(to: "What is the capital of France?", options: greedy)
    XCTAssertTrue(answer.content.contains("Paris"), answer.content)
    var streamed = ""
    for try await snapshot in session.streamResponse(to: "And of Italy?", options: greedy) {
      streamed = snapshot.content
    }
    XCTAssertTrue(streamed.contains("Rome"), "the second turn sees the first: \(streamed)")
  }

  /// Issue 10's reference on the real model: for each conversation our Jinja
  /// engine renders SmolLM2's template to the very text llama-server's own
  /// engine (minja, `--jinja`) renders (`POST /apply-template`). The greedy
  /// parity of the answers is `cloud-benchmark template-parity`.
  func testOurRenderedPrompt_equalsLlamaServersApplyTemplate() async throws {
    let path = try LocalTestModels.require(LocalTestModels.defaultPath)
    let server = try await OpenAITestServers.llamaServer(model: path)
    defer { server.stop() }
    let model = try await LocalSystemModel(modelPath: path, contextSize: 512).loadedModel(progress: nil)
    typealias Message = ChatTemplate.Message
    let conversations: [[Message]] = [
      [Message(role: "user", content: "What is the capital of France?")],
      [
        Message(role: "system", content: "You are a pirate."), Message(role: "user", content: "Hello!"),
        Message(role: "assistant", content: "Arr, ahoy!"), Message(role: "user", content: "Where is your ship?"),
      ],
      [
        Message(role: "user", content: "Ünïcödé 🌊 naïve café — 東京?"),
        Message(role: "assistant", content: "  spaced  \n\nlines "), Message(role: "user", content: "<|im_end|> text"),
      ],
    ]
    for messages in conversations {
      let ours = try model.template.renderText(messages, addGenerationPrompt: true)
      let theirs = try await Self.applyTemplate(messages, on: server)
      XCTAssertEqual(ours, theirs, "for \(messages.map(\.role))")
    }
  }

  private static func applyTemplate(_ messages: [ChatTemplate.Message], on server: LlamaServerProcess) async throws
    -> String
  {
    guard let url = URL(string: "http://127.0.0.1:\(server.port)/apply-template") else { throw URLError(.badURL) }
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.httpBody = try JSONSerialization.data(withJSONObject: [
      "messages": messages.map { ["role": $0.role, "content": $0.content] }
    ])
    let (data, _) = try await URLSession.shared.data(for: request)
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return try XCTUnwrap(object["prompt"] as? String, String(decoding: data, as: UTF8.self))
  }
}
