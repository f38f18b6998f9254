import Foundation
import OpenAIServers
import XCTest

@testable import HybridInference

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
}
