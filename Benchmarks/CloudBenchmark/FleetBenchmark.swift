import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import OpenAIServers
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `cloud-benchmark fleet --local-model GGUF`: the remote backends with many
/// requests in flight, beside curl doing the same requests in the same run.
///
/// For each server and each number in flight (32, 128): a fresh client sends
/// that many requests at once (cold: every one opens its connection), then
/// three times as many with that many in flight (warm: the connections are
/// up). curl does the same in one `--parallel` run, split by whether a
/// transfer opened a connection (`%{num_connects}`). Servers: llama-server
/// `-np 4` with an HTTP pool larger than the most in flight, the same with
/// its default pool (issue 22's hypothesis), and the loopback Gemini server.
/// One-token answers, so the server's work is small and the same on both
/// sides. `FLEET_CONNECTIONS=N` sets the clients' connection limit per host
/// (`RequestOptions.maximumConnectionsPerHost`, default 32).
enum FleetBenchmark {
  static let inFlight = [32, 128]
  /// Every request's deadline; a request past it fails and is counted.
  static let deadline = Duration.seconds(30)
  static let options = RequestOptions(
    timeout: deadline, retryPolicy: .none,
    maximumConnectionsPerHost: ProcessInfo.processInfo.environment["FLEET_CONNECTIONS"].flatMap(Int.init) ?? 32)

  static func run(modelPath: String) async throws {
    let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
    var rows: [FleetRow] = []
    for pool in [HTTPPool.large, .default] {
      let server = try await LlamaServerProcess(
        model: modelPath, parallel: 4, contextSize: 4 * 1024, threads: threads,
        extraArguments: pool.arguments)
      defer { server.stop() }
      let target = FleetTarget.openAI(server: server)
      try await target.warmUp()
      for count in pool == .large ? inFlight : [32] {
        rows += try await measure(target, inFlight: count, pool: pool)
      }
    }
    let gemini = try LoopbackServer()
    defer { gemini.stop() }
    let target = FleetTarget.gemini(server: gemini)
    try await target.warmUp()
    for count in inFlight { rows += try await measure(target, inFlight: count, pool: nil) }
    print(FleetRow.markdown(rows))
  }

  /// The client's, the bare URLSession's and curl's rows for one server at
  /// `inFlight`, cold and warm.
  static func measure(_ target: FleetTarget, inFlight: Int, pool: HTTPPool?) async throws -> [FleetRow] {
    let client = try await target.clientRun(inFlight: inFlight)
    let bare = try await target.bareRun(inFlight: inFlight)
    let curl = try target.curlRun(inFlight: inFlight)
    let server = target.serverName + (pool.map { ", \($0.label)" } ?? "")
    return [
      FleetRow(
        server: server, clientName: target.clientName, inFlight: inFlight, phase: "cold", client: client.cold,
        bare: bare.cold, curl: curl.cold, connections: client.connections, curlConnections: curl.connections,
        failed: client.coldFailed, curlFailed: curl.failed),
      FleetRow(
        server: server, clientName: target.clientName, inFlight: inFlight, phase: "warm", client: client.warm,
        bare: bare.warm, curl: curl.warm, connections: client.connections, curlConnections: curl.connections,
        failed: client.warmFailed, curlFailed: 0),
    ]
  }
}

/// llama-server's HTTP thread pool for a run.
enum HTTPPool: Equatable {
  /// `--threads-http` above the most requests in flight.
  case large
  /// llama-server's own choice, `max(np + 2, cores - 1)`.
  case `default`

  /// More threads than requests in flight, and a few for idle keep-alives.
  static let largeThreads = 160

  var arguments: [String] {
    self == .large ? ["--threads-http", "\(Self.largeThreads)"] : []
  }

  var label: String {
    self == .large ? "--threads-http \(Self.largeThreads)" : "default HTTP pool"
  }
}
