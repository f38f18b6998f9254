import Foundation
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The repository's loopback Gemini server (Tests/GeminiServer/gemini_server.py)
/// as a child process, so the cloud modes run end to end without a network.
///
/// Model names choose its behaviour: `echo` answers "echo: <prompt>",
/// `fault-400` is a 400, and so on (see the script's docstring).
final class LoopbackGemini {
  /// The key the server expects; the command reads it from `GEMINI_API_KEY`.
  static let apiKey = "test-api-key-for-hybrid-chat"

  let baseURL: URL
  private let process: Process
  private let stdin: Pipe

  /// The environment that points `hybrid-chat` at this server.
  var environment: [String: String] {
    ["GEMINI_API_KEY": Self.apiKey, "GOOGLE_GEMINI_BASE_URL": baseURL.absoluteString]
  }

  /// Starts the server and waits for the port it prints; skips the test
  /// where python3 is missing.
  init() throws {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("GeminiServer/gemini_server.py")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, "--api-key", Self.apiKey]
    let stdout = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardInput = stdin
    try process.run()
    var line = Data()
    while true {
      let byte = stdout.fileHandleForReading.readData(ofLength: 1)
      if byte.isEmpty || byte == Data("\n".utf8) { break }
      line.append(byte)
    }
    guard let port = Int(String(decoding: line, as: UTF8.self)),
      let baseURL = URL(string: "http://127.0.0.1:\(port)")
    else {
      process.terminate()
      throw XCTSkip("the loopback Gemini server did not start (is python3 installed?)")
    }
    self.baseURL = baseURL
    self.process = process
    self.stdin = stdin
  }

  /// Stops the server; closing its stdin would end it too.
  func stop() {
    if process.isRunning { process.terminate() }
    try? stdin.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  deinit { stop() }

  /// The JSON body of the last request the server received for `model`.
  func lastRequestBody(_ model: String) async throws -> [String: Any] {
    var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
    components?.path = "/_last"
    components?.queryItems = [URLQueryItem(name: "model", value: model)]
    let url = try XCTUnwrap(components?.url)
    let (data, _) = try await URLSession.shared.data(from: url)
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    return try XCTUnwrap(object?["body"] as? [String: Any], "no request for \(model)")
  }
}
