import Foundation
import XCTest

/// The cloud modes of the built binary, against the loopback Gemini server
/// and a closed loopback port (offline).
final class CLICloudEndToEndTests: XCTestCase {
  private typealias Chat = HybridChatProcess
  private var server: LoopbackGemini?
  /// A loopback port where nothing listens: "offline", as the design defines it.
  private let closedPort = ["GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9", "GEMINI_API_KEY": "k1"]

  override func setUpWithError() throws {
    try Chat.requireBinary()
    server = try LoopbackGemini()
  }

  override func tearDown() {
    server?.stop()
    server = nil
  }

  private func cloud() throws -> LoopbackGemini { try XCTUnwrap(server) }

  private func jsonObject(_ result: HybridChatProcess.Result) throws -> [String: Any] {
    XCTAssertEqual(result.status, 0, result.stderr)
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    return try XCTUnwrap(object as? [String: Any], result.stdout)
  }

  func testOnlyCloudStreamsTheAnswer() throws {
    let result = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "echo", "Hello cloud"],
      environment: try cloud().environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stdout, "echo: Hello cloud\n")
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    XCTAssertTrue(result.stderr.hasPrefix("You used: echo-model"), result.stderr)
  }

  func testVertexFlags_speakVertexWithTheTokenAndNoKey() async throws {
    let server = try cloud()
    let environment = [
      "GEMINI_API_KEY": LoopbackGemini.apiKey, "GOOGLE_VERTEX_BASE_URL": server.baseURL.absoluteString,
      "GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.valid-cli-SECRET",
    ]
    let result = try Chat.run(
      [
        "--mode", "only-cloud", "--cloud-model", "echo", "--vertex-project", "cli-project",
        "--vertex-location", "us-east5", "Hello Vertex",
      ],
      environment: environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stdout, "echo: Hello Vertex\n")
    XCTAssertFalse(result.stderr.contains("SECRET"), result.stderr)
    let request = try await server.lastRequest("echo")
    XCTAssertEqual(
      request["path"] as? String,
      "/v1/projects/cli-project/locations/us-east5/publishers/google/models/echo:streamGenerateContent")
    XCTAssertEqual(request["bearer"] as? String, "ya29.valid-cli-SECRET")
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, false)

    // Without a token in the environment: the metadata server's (here, the same loopback server).
    let metadata = [
      "GOOGLE_VERTEX_BASE_URL": server.baseURL.absoluteString,
      "GCE_METADATA_HOST": "127.0.0.1:\(server.baseURL.port ?? 0)",
    ]
    let fromMetadata = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "echo", "--vertex-project", "cli-project", "--no-stream", "Hi"],
      environment: metadata)
    XCTAssertEqual(fromMetadata.status, 0, fromMetadata.stderr)
    let second = try await server.lastRequest("echo")
    XCTAssertEqual(second["bearer"] as? String, "ya29.valid-meta-1")

    // No project anywhere: refused before anything is sent, saying how to give one.
    let noProject = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "echo", "--vertex-location", "global", "Hi"], environment: metadata)
    XCTAssertEqual(noProject.status, 1)
    XCTAssertTrue(noProject.stderr.contains("--vertex-project"), noProject.stderr)
  }

  func testFlagsReachTheCloudRequest() async throws {
    let server = try cloud()
    let result = try Chat.run(
      [
        "--mode", "only-cloud", "--cloud-model", "echo", "--no-stream", "--system", "Be brief.",
        "--temperature", "0.5", "--top-p", "0.9", "--top-k", "3", "--seed", "4",
        "--max-tokens", "7", "--thinking", "low", "Hi",
      ], environment: server.environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    let body = try await server.lastRequestBody("echo")
    let config = try XCTUnwrap(body["generationConfig"] as? [String: Any])
    XCTAssertEqual(config["temperature"] as? Double, 0.5)
    XCTAssertEqual(config["topP"] as? Double, 0.9)
    XCTAssertEqual(config["topK"] as? Int, 3)
    XCTAssertEqual(config["seed"] as? Int, 4)
    XCTAssertEqual(config["maxOutputTokens"] as? Int, 7)
    XCTAssertEqual((config["thinkingConfig"] as? [String: Any])?["thinkingLevel"] as? String, "LOW")
    let system = try XCTUnwrap(body["systemInstruction"] as? [String: Any])
    let parts = try XCTUnwrap(system["parts"] as? [[String: Any]])
    XCTAssertEqual(parts.first?["text"] as? String, "Be brief.")
  }

  func testWithAKeyTheDefaultIsPreferOnDeviceAndTheFallbackIsInTheJSON() throws {
    let object = try jsonObject(
      Chat.run(
        ["--model", "/nonexistent.gguf", "--cloud-model", "echo", "--json", "Hi"],
        environment: try cloud().environment))
    XCTAssertEqual(object["mode"] as? String, "prefer-on-device")
    XCTAssertEqual(object["modelVersion"] as? String, "echo-model")
    let fallback = try XCTUnwrap(object["fallback"] as? [String: Any])
    XCTAssertEqual(fallback["from"] as? String, "llama-cpp-system-language-model")
    XCTAssertEqual(fallback["to"] as? String, "echo")
  }

  func testPreferCloudOfflineAnswersOnDevice() throws {
    let model = try Chat.requireTinyModel()
    let result = try Chat.run(
      ["--mode", "prefer-cloud", "--model", model, "--max-tokens", "4", "Hi"],
      environment: closedPort)
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stderrLines.count, 2, result.stderr)
    XCTAssertTrue(
      result.stderrLines[0].hasPrefix(
        "hybrid-chat: falling back from gemini-3.1-flash-lite to llama-cpp-system-language-model"),
      result.stderr)
    XCTAssertTrue(result.stderrLines[1].hasPrefix("You used: llama-cpp-system-language-model"))
  }

  func testOfflineWithOnlyCloudIsAnError() throws {
    let result = try Chat.run(["--mode", "only-cloud", "Hi"], environment: closedPort)
    XCTAssertEqual(result.status, 1)
    XCTAssertEqual(result.stdout, "")
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    XCTAssertTrue(
      result.stderr.hasPrefix("hybrid-chat: error: cannot reach the cloud model's server"), result.stderr)
  }

  func testCloudErrorIsOneLineWithoutTheKey() throws {
    let result = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "fault-400", "Hi"],
      environment: try cloud().environment)
    XCTAssertEqual(result.status, 1)
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    XCTAssertTrue(result.stderr.hasPrefix("hybrid-chat: error: cloud API error 400"), result.stderr)
    XCTAssertFalse(result.stderr.contains(LoopbackGemini.apiKey))
  }
}
