import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceOpenAI
import HybridInferenceRemote
import OpenAIServers
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One server of the fleet benchmark and the three clients sent at it: the
/// library's backend, a bare delegate URLSession, and curl.
struct FleetTarget {
  let serverName: String
  let clientName: String
  let port: Int
  /// A fresh model: its own transport, so no connection is up.
  let makeModel: @Sendable () -> any LanguageModel
  let request: ModelRequest
  /// The same POST, for the bare URLSession.
  let urlRequest: URLRequest
  let url: String
  let body: String
  let headers: [String]

  static func openAI(server: LlamaServerProcess) -> FleetTarget {
    let baseURL = server.baseURL
    let body = #"{"model":"fleet-model","messages":[{"role":"user","content":"Hi"}],"temperature":0,"max_tokens":1}"#
    let url = baseURL.appendingPathComponent("chat/completions")
    return FleetTarget(
      serverName: "llama-server -np 4", clientName: "OpenAICompatibleModel", port: server.port,
      makeModel: {
        OpenAICompatibleModel(
          name: "fleet-model", baseURL: baseURL, apiKey: nil,
          requestOptions: FleetBenchmark.options, logHandler: .silent)
      },
      request: ModelRequest(
        transcript: Transcript(entries: [.prompt("Hi")]),
        options: .gemini(GenerationConfig(temperature: 0, maxOutputTokens: 1))),
      urlRequest: post(url, body: body, headers: [:]), url: url.absoluteString, body: body,
      headers: ["Content-Type: application/json"])
  }

  static func gemini(server: LoopbackServer) -> FleetTarget {
    let baseURL = server.baseURL
    let body = #"{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}"#
    let url = baseURL.appendingPathComponent("v1beta/models/echo:generateContent")
    return FleetTarget(
      serverName: "loopback Gemini server (Python, thread per connection)", clientName: "CloudGeminiModel",
      port: baseURL.port ?? 0,
      makeModel: {
        CloudGeminiModel(
          name: "echo", apiKey: LoopbackServer.apiKey, baseURL: baseURL,
          requestOptions: FleetBenchmark.options, logHandler: .silent)
      },
      request: ModelRequest(transcript: Transcript(entries: [.prompt("Hi")])),
      urlRequest: post(url, body: body, headers: ["x-goog-api-key": LoopbackServer.apiKey]),
      url: url.absoluteString, body: body,
      headers: ["Content-Type: application/json", "x-goog-api-key: \(LoopbackServer.apiKey)"])
  }

  private static func post(_ url: URL, body: String, headers: [String: String]) -> URLRequest {
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return request
  }

  /// A few requests on a model thrown away after, so the server has loaded
  /// what it loads on its first request.
  func warmUp() async throws {
    let model = makeModel()
    for _ in 0..<10 { _ = try await model.respond(to: request) }
  }

  /// The library's backend: `inFlight` requests at once on a fresh model,
  /// then three times as many on its warm connections.
  func clientRun(inFlight: Int) async throws -> ClientRun {
    let model = makeModel()
    let request = self.request
    let failures = Atomic<Int>(0)
    let body: @Sendable () async -> Void = {
      do { _ = try await model.respond(to: request) } catch { failures.add(1, ordering: .relaxed) }
    }
    let cold = try await CloudBenchmark.measure(inFlight, concurrency: inFlight, body)
    let coldFailed = failures.exchange(0, ordering: .relaxed)
    let connections = openConnections()
    let warm = try await CloudBenchmark.measure(3 * inFlight, concurrency: inFlight, body)
    return ClientRun(
      cold: cold, warm: warm, connections: connections, coldFailed: coldFailed,
      warmFailed: failures.load(ordering: .relaxed))
  }

  /// The floor under the backend: a bare delegate URLSession, same pattern.
  func bareRun(inFlight: Int) async throws -> (cold: Measurement, warm: Measurement) {
    let bare = BareURLSession(request: urlRequest)
    let session = bare.makeSession(maximumConnectionsPerHost: FleetBenchmark.options.maximumConnectionsPerHost)
    defer { session.finishTasksAndInvalidate() }
    let cold = try await CloudBenchmark.measure(inFlight, concurrency: inFlight) { await bare.post(on: session) }
    let warm = try await CloudBenchmark.measure(3 * inFlight, concurrency: inFlight) { await bare.post(on: session) }
    return (cold, warm)
  }

  /// curl: `4 * inFlight` POSTs, `inFlight` at once, in one process; a
  /// transfer that opened a connection is cold, one that reused it warm.
  func curlRun(inFlight: Int) throws -> CurlRun {
    let config = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString).curl")
    defer { try? FileManager.default.removeItem(at: config) }
    let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    let one =
      "url = \"\(url)\"\ndata = \"\(escaped)\"\n" + headers.map { "header = \"\($0)\"\n" }.joined()
      + "output = \"/dev/null\"\nwrite-out = \"%{http_code} %{num_connects} %{time_total}\\n\"\n"
    try Array(repeating: one, count: 4 * inFlight).joined(separator: "next\n").write(
      to: config, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "curl", "-s", "--max-time", "\(FleetBenchmark.deadline.components.seconds)", "--config", config.path,
      "--parallel", "--parallel-immediate", "--parallel-max", "\(inFlight)",
    ]
    let output = Pipe()
    process.standardOutput = output
    let start = ContinuousClock.now
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let wall = milliseconds(ContinuousClock.now - start)
    var cold: [Double] = []
    var warm: [Double] = []
    var connections = 0
    var failed = 0
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count == 3, let connects = Int(fields[1]), let seconds = Double(fields[2]) else { continue }
      if fields[0] != "200" { failed += 1 }
      connections += connects
      if connects > 0 { cold.append(seconds * 1000) } else { warm.append(seconds * 1000) }
    }
    return CurlRun(
      cold: Measurement(latencies: cold, wall: wall), warm: Measurement(latencies: warm, wall: wall),
      connections: connections, failed: failed)
  }

  /// Established TCP connections to the server's port from this machine
  /// (`ss`), while the client's idle connections are still up.
  func openConnections() -> Int {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ss", "-Htn", "state", "established", "( dport = :\(port) )"]
    let output = Pipe()
    process.standardOutput = output
    guard (try? process.run()) != nil else { return -1 }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").count
  }
}

struct ClientRun {
  var cold: Measurement
  var warm: Measurement
  var connections: Int
  var coldFailed: Int
  var warmFailed: Int
}

struct CurlRun {
  var cold: Measurement
  var warm: Measurement
  var connections: Int
  var failed: Int
}
