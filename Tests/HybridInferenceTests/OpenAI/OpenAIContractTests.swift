// swift-format-ignore-file
// (The second contract snippet's lines below are kept byte for byte.)

import Foundation
import HybridInference
import OpenAIServers
import XCTest

/// The second contract snippet's `fleet` and `tiered` lines (kept byte for byte) compile and run against a
/// real llama-server. The server listens where the snippet says only if
/// that port is free, so the URL is swapped for the test server's; the
/// device is switched off and no Gemini key is set, so the fleet answers.
final class OpenAIContractTests: XCTestCase {
  func testFleetAndTieredLines_runAgainstLlamaServer() async throws {
    let server = try await OpenAITestServers.llamaServer()
    defer { server.stop() }
    let local = LocalSystemModel(modelPath: "/nonexistent.gguf", isEnabled: false)
    let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite")
    let serverURL = server.baseURL
    func URL(string _: String) -> Foundation.URL? { serverURL }

    // ---- the second contract snippet, verbatim ----
    let fleet = OpenAICompatibleModel(name: "smollm2",
                                      baseURL: URL(string: "http://127.0.0.1:8080/v1")!,
                                      apiKey: nil)           // else OPENAI_API_KEY
    let tiered = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: .hybridModel(primary: fleet, secondary: cloud)))
    // ---- end ----

    let response = try await tiered.respond(
      to: "Hello", options: .gemini(GenerationConfig(maxOutputTokens: 8)))
    // llama-server names the model by its alias, whatever the request says.
    XCTAssertEqual(response.rawResponse.modelVersion, "fleet-model")
    XCTAssertEqual(fleet.placement, .cloud)
  }
}
