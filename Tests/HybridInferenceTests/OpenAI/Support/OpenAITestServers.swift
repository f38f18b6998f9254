import Foundation
import GeminiServerProcess
import OpenAIServers
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

/// The servers the OpenAI-compatible tests talk to: the real llama-server
/// (the happy path, concurrency, the second contract snippet) and the Python stub (faults).
enum OpenAITestServers {
  /// llama-server with `model` (the tiny one unless told); a missing binary or model is a missing
  /// prerequisite (a failure under `make test` or CI, a skip elsewhere).
  static func llamaServer(
    model: String = LocalTestModels.tinyPath, parallel: Int = 1, contextSize: Int = 2048
  ) async throws -> LlamaServerProcess {
    guard FileManager.default.fileExists(atPath: model) else {
      throw Prerequisite.missing("the test model at \(model) (run make test)")
    }
    do {
      let server = try await LlamaServerProcess(
        model: model, parallel: parallel, contextSize: contextSize, threads: 1)
      // A port an earlier test saw closed may come back as this server's.
      if let origin = Origin(server.baseURL) { ReachabilityMemory.shared.recordReachable(origin) }
      return server
    } catch let error as LlamaServerProcess.StartError where error.isMissingBinary {
      throw Prerequisite.missing(error.description)
    }
  }

  /// The llama-server binary, or a missing prerequisite when there is none.
  static func requireLlamaServer() throws -> String {
    guard let binary = LlamaServerProcess.binaryPath else {
      throw Prerequisite.missing("llama-server (scripts/setup-llama.sh builds it; or set HYBRID_LLAMA_SERVER)")
    }
    return binary
  }

  /// The fault-injection stub (Tests/OpenAIServer/openai_stub.py); python3
  /// missing is a missing prerequisite.
  static func stub(apiKey: String? = nil) throws -> GeminiServerProcess {
    do {
      let server = try GeminiServerProcess(
        script: "Tests/OpenAIServer/openai_stub.py", arguments: apiKey.map { ["--api-key", $0] } ?? [])
      if let origin = Origin(server.baseURL) { ReachabilityMemory.shared.recordReachable(origin) }
      return server
    } catch {
      throw Prerequisite.missing("python3, for the OpenAI stub server: \(error)")
    }
  }

  /// How many chat requests the stub received for `model`.
  static func requestCount(_ server: GeminiServerProcess, model: String) async throws -> Int {
    try await stats(server, model: model)["count"] as? Int ?? -1
  }

  /// How many `fault-flood` bodies for `model` the stub is still writing
  /// (each until the client hangs up).
  static func floodsBeingWritten(_ server: GeminiServerProcess, model: String) async throws -> Int {
    try await stats(server, model: model)["writing"] as? Int ?? -1
  }

  private static func stats(_ server: GeminiServerProcess, model: String) async throws -> [String: Any] {
    var components = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false)
    components?.path = "/_stats"
    components?.queryItems = [URLQueryItem(name: "model", value: model)]
    let (data, _) = try await URLSession.shared.data(from: try XCTUnwrap(components?.url))
    return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
  }
}

extension GeminiServerProcess {
  /// The stub's OpenAI API root.
  var openAIBaseURL: URL { baseURL.appendingPathComponent("v1") }
}
