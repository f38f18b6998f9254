import Foundation
import GeminiServerProcess
import TestPrerequisites
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

/// The loopback Gemini server (Tests/GeminiServer/gemini_server.py), run as a
/// child process for one test: started in `setUp`, stopped in `tearDown`.
final class GeminiTestServer {
  /// The key the server expects in `x-goog-api-key`.
  static let apiKey = "AIzaSy-test-SECRET-0123456789"

  private let server: GeminiServerProcess
  /// The HTTP client every model of `model(...)` uses, whatever its options say.
  var transport: RequestOptions.Transport = .automatic
  var port: Int { server.port }
  var baseURL: URL { server.baseURL }

  /// The repository root, found from this file's path.
  static let repositoryRoot = GeminiServerProcess.repositoryRoot

  /// The recorded responses in the repository (`Tests/Fixtures/gemini-recorded`), or the
  /// folder of the same layout that `HYBRID_GEMINI_FIXTURES` names.
  static let fixturesDirectory: URL = {
    if let path = ProcessInfo.processInfo.environment["HYBRID_GEMINI_FIXTURES"], !path.isEmpty {
      return URL(fileURLWithPath: path)
    }
    return repositoryRoot.appendingPathComponent("Tests/Fixtures/gemini-recorded")
  }()

  /// The recorded responses, or nil when the folder is absent.
  static var fixtureFiles: [String]? {
    let folder = fixturesDirectory.appendingPathComponent("googleai")
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else {
      return nil
    }
    return names.filter { $0.hasPrefix("unary-") || $0.hasPrefix("streaming-") }.sorted()
  }

  /// Fails (under CI or `make test`) or skips the calling test where the fixtures are absent.
  static func requireFixtures() throws -> [String] {
    guard let files = fixtureFiles, !files.isEmpty else {
      throw Prerequisite.missing(
        "the recorded Gemini fixtures at \(fixturesDirectory.path)/googleai "
          + "(HYBRID_GEMINI_FIXTURES names the gemini-fixtures folder)")
    }
    return files
  }

  /// Starts the server on `port` (0: a free one) and waits for it to print its port.
  init(port: Int = 0) throws {
    server = try GeminiServerProcess(apiKey: Self.apiKey, fixtures: Self.fixturesDirectory, port: port)
    // A port an earlier test saw closed may come back as this server's: it
    // listens now, so whatever the process remembered about it is stale.
    if let origin = Origin(server.baseURL) { ReachabilityMemory.shared.recordReachable(origin) }
  }

  /// Stops the server.
  func stop() { server.stop() }

  /// A cloud model pointed at this server.
  func model(
    _ name: String, apiKey: String? = GeminiTestServer.apiKey,
    requestOptions: RequestOptions = .fastTests, safetySettings: [SafetySetting]? = nil,
    logHandler: LogHandler = .silent
  ) -> CloudGeminiModel {
    var requestOptions = requestOptions
    requestOptions.transport = transport
    return CloudGeminiModel(
      name: name, apiKey: apiKey, baseURL: baseURL, requestOptions: requestOptions,
      safetySettings: safetySettings, logHandler: logHandler)
  }

  /// How many requests the server received for `model`.
  func requestCount(_ model: String) async throws -> Int {
    let object = try await get("/_stats", model: model) as? [String: Any]
    return object?["count"] as? Int ?? -1
  }

  /// How many `fault-endless` bodies for `model` the server is still writing
  /// (each until the client hangs up).
  func endlessBodiesBeingWritten(_ model: String) async throws -> Int {
    let object = try await get("/_stats", model: model) as? [String: Any]
    return object?["writing"] as? Int ?? -1
  }

  /// The last request the server received for `model`: path, query,
  /// headers (without the key), and the JSON body.
  func lastRequest(_ model: String) async throws -> [String: Any] {
    let object = try await get("/_last", model: model)
    return try XCTUnwrap(object as? [String: Any], "no request for \(model)")
  }

  /// Every request the server received for `model`, oldest first (as `lastRequest`).
  func allRequests(_ model: String) async throws -> [[String: Any]] {
    let object = try await get("/_all", model: model)
    return try XCTUnwrap(object as? [[String: Any]], "no requests for \(model)")
  }

  /// This server as the metadata server: `GCE_METADATA_HOST`'s `host:port`.
  var metadataHost: String { "127.0.0.1:\(port)" }

  /// How the metadata server answers from now on: tokens that expire after
  /// `expiresIn` seconds (nil: tokens without `expires_in`), or `status`
  /// instead of a token when it is not 200.
  func configureMetadata(expiresIn: Int? = 3600, status: Int = 200) async throws {
    _ = try await get(
      "/_metadata", model: "",
      extra: [
        URLQueryItem(name: "expires_in", value: "\(expiresIn ?? -1)"),
        URLQueryItem(name: "status", value: "\(status)"),
      ])
  }

  /// A loopback URL where connecting hangs, as to an unreachable host.
  func blackholeURL() async throws -> URL {
    let object = try await get("/_blackhole", model: "") as? [String: Any]
    let port = try XCTUnwrap(object?["port"] as? Int)
    return try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)"))
  }

  private func get(_ path: String, model: String, extra: [URLQueryItem] = []) async throws -> Any {
    var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
    components?.path = path
    components?.queryItems = [URLQueryItem(name: "model", value: model)] + extra
    let url = try XCTUnwrap(components?.url)
    let (data, _) = try await URLSession.shared.data(from: url)
    return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
  }
}

extension RequestOptions {
  /// Short waits, so retry tests take milliseconds, not seconds.
  static let fastTests = RequestOptions(
    timeout: .seconds(20), connectTimeout: .seconds(5),
    retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(50)))
}

/// A unique suffix, so each test has its own request counter on the server.
func uniqueID() -> String {
  "id-" + UUID().uuidString.prefix(8).lowercased()
}
