import Foundation
import GeminiServerProcess
import TestPrerequisites
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

  private let server: GeminiServerProcess
  var baseURL: URL { server.baseURL }

  /// The environment that points `hybrid-chat` at this server.
  var environment: [String: String] {
    ["GEMINI_API_KEY": Self.apiKey, "GOOGLE_GEMINI_BASE_URL": baseURL.absoluteString]
  }

  /// Starts the server and waits for the port it prints; skips the test
  /// where python3 is missing.
  init() throws {
    do {
      server = try GeminiServerProcess(apiKey: Self.apiKey)
    } catch {
      throw Prerequisite.missing("python3 for the loopback Gemini server (\(error))")
    }
  }

  /// Stops the server.
  func stop() { server.stop() }

  /// The JSON body of the last request the server received for `model`.
  func lastRequestBody(_ model: String) async throws -> [String: Any] {
    let request = try await lastRequest(model)
    return try XCTUnwrap(request["body"] as? [String: Any], "no request for \(model)")
  }

  /// The last request the server received for `model`: path, headers
  /// (without the key and the Authorization header), the bearer token, body.
  func lastRequest(_ model: String) async throws -> [String: Any] {
    var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
    components?.path = "/_last"
    components?.queryItems = [URLQueryItem(name: "model", value: model)]
    let url = try XCTUnwrap(components?.url)
    let (data, _) = try await URLSession.shared.data(from: url)
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    return try XCTUnwrap(object, "no request for \(model)")
  }
}
