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
  var serverName: String
  let clientName: String
  let port: Int
  /// A fresh model with these options: its own transport, so no connection
  /// is up.
  let makeModel: @Sendable (RequestOptions) -> any LanguageModel
  /// Whether issue 22's goal is read on this server's rows: false for a
  /// llama-server whose requests queue for fewer slots than are in flight.
  var goalApplies = true
  /// The options every model of the run gets (`FleetBenchmark.options(for:)`).
  var options = FleetBenchmark.options(for: .automatic)
  let request: ModelRequest
  /// The same POST, for the bare URLSession.
  let urlRequest: URLRequest
  let url: String
  let body: String
  let headers: [String]
  /// The server process's CPU time so far in ms (nan: not measured).
  var serverCPU: @Sendable () -> Double

  static func openAI(server: LlamaServerProcess) -> FleetTarget {
    openAI(baseURL: server.baseURL, port: server.port)
  }

  private static func openAI(baseURL: URL, port: Int) -> FleetTarget {
    let body = #"{"model":"fleet-model","messages":[{"role":"user","content":"Hi"}],"temperature":0,"max_tokens":1}"#
    let url = baseURL.appendingPathComponent("chat/completions")
    return FleetTarget(
      serverName: "llama-server", clientName: "OpenAICompatibleModel", port: port,
      makeModel: { options in
        OpenAICompatibleModel(
          name: "fleet-model", baseURL: baseURL, apiKey: nil, requestOptions: options, logHandler: .silent)
      },
      request: ModelRequest(
        transcript: Transcript(entries: [.prompt("Hi")]),
        options: .gemini(GenerationConfig(temperature: 0, maxOutputTokens: 1))),
      urlRequest: post(url, body: body, headers: [:]), url: url.absoluteString, body: body,
      headers: ["Content-Type: application/json"], serverCPU: { .nan })
  }

  /// The fleet server (`FleetServer`) answering Gemini's recorded reply.
  static func gemini(server: FleetServerProcess) -> FleetTarget {
    let baseURL = server.baseURL
    let body = #"{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}"#
    let url = baseURL.appendingPathComponent("v1beta/models/fleet-model:generateContent")
    return FleetTarget(
      serverName: "fleet server (loopback, Swift, recorded Gemini answer)", clientName: "CloudGeminiModel",
      port: server.port,
      makeModel: { options in
        CloudGeminiModel(
          name: "fleet-model", apiKey: LoopbackServer.apiKey, baseURL: baseURL, requestOptions: options,
          logHandler: .silent)
      },
      request: ModelRequest(transcript: Transcript(entries: [.prompt("Hi")])),
      urlRequest: post(url, body: body, headers: ["x-goog-api-key": LoopbackServer.apiKey]),
      url: url.absoluteString, body: body,
      headers: ["Content-Type: application/json", "x-goog-api-key: \(LoopbackServer.apiKey)"],
      serverCPU: { server.cpuMilliseconds() })
  }

  /// The fleet server answering as an OpenAI-compatible server: the
  /// library's OpenAI path with a server that costs next to nothing.
  static func openAI(fleet server: FleetServerProcess) -> FleetTarget {
    var target = openAI(baseURL: server.baseURL, port: server.port)
    target.serverName = "fleet server (loopback, Swift, fixed OpenAI answer)"
    target.serverCPU = { server.cpuMilliseconds() }
    return target
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
  /// what it loads on its first request, then a burst of the most in flight
  /// on fresh connections from a bare session thrown away too: a fresh
  /// llama-server's first burst of new connections was 3-30x slower than its
  /// later ones whichever client sent it (the lab log in Benchmarks/history/, "Remote clients at scale"), which made the
  /// client, measured first, look slow cold.
  func warmUp() async throws {
    let model = makeModel(options)
    for _ in 0..<10 { _ = try await model.respond(to: request) }
    let count = FleetBenchmark.inFlight.max() ?? 1
    let bare = BareURLSession(request: urlRequest)
    let session = bare.makeSession(maximumConnectionsPerHost: count)
    defer { session.finishTasksAndInvalidate() }
    _ = try await Self.workers(count, each: 1) { await bare.post(on: session) }
  }

  /// The library's backend: `inFlight` requests at once on a fresh model,
  /// then `FleetBenchmark.warmEach` more each on its warm connections.
  func clientRun(inFlight: Int) async throws -> ClientRun {
    let model = makeModel(options)
    let request = self.request
    let failures = Atomic<Int>(0)
    let body: @Sendable () async -> Void = {
      do { _ = try await model.respond(to: request) } catch { failures.add(1, ordering: .relaxed) }
    }
    let cpu = CPUSpan(serverCPU: serverCPU)
    let cold = try await Self.workers(inFlight, each: 1, body)
    let coldFailed = failures.exchange(0, ordering: .relaxed)
    let connections = openConnections()
    let warm = try await Self.workers(inFlight, each: FleetBenchmark.warmEach, body)
    return ClientRun(
      cold: cold, warm: warm, connections: connections, coldFailed: coldFailed,
      warmFailed: failures.load(ordering: .relaxed), cpu: cpu.end(requests: (1 + FleetBenchmark.warmEach) * inFlight))
  }

  /// The floor under the backend: a bare delegate URLSession, same pattern.
  func bareRun(inFlight: Int) async throws -> ClientRun {
    let bare = BareURLSession(request: urlRequest)
    let session = bare.makeSession(maximumConnectionsPerHost: options.maximumConnectionsPerHost)
    defer { session.finishTasksAndInvalidate() }
    let cpu = CPUSpan(serverCPU: serverCPU)
    let cold = try await Self.workers(inFlight, each: 1) { await bare.post(on: session) }
    let connections = openConnections()
    let warm = try await Self.workers(inFlight, each: FleetBenchmark.warmEach) { await bare.post(on: session) }
    return ClientRun(
      cold: cold, warm: warm, connections: connections, coldFailed: 0, warmFailed: 0,
      cpu: cpu.end(requests: (1 + FleetBenchmark.warmEach) * inFlight))
  }

  /// `count` tasks, each calling `body` `each` times in a row: `count` in
  /// flight as curl's processes are (`CurlFleet`), each request timed from
  /// the moment its task asks for it. (`CloudBenchmark.measure` launches a
  /// task per request from one loop, so on saturated cores a request also
  /// waited, untimed, for that loop.) Returns each call's latency (ms) and
  /// the wall time of the whole run.
  static func workers(
    _ count: Int, each: Int, _ body: @escaping @Sendable () async throws -> Void
  ) async throws -> Measurement {
    let start = ContinuousClock.now
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
      for _ in 0..<count {
        group.addTask {
          var latencies: [Double] = []
          for _ in 0..<each {
            let begin = ContinuousClock.now
            try await body()
            latencies.append(milliseconds(ContinuousClock.now - begin))
          }
          return latencies
        }
      }
      var all: [Double] = []
      while let some = try await group.next() { all += some }
      return all
    }
    return Measurement(latencies: latencies, wall: milliseconds(ContinuousClock.now - start))
  }

  /// curl: `inFlight` processes, `1 + warmEach` POSTs each in a row (`CurlFleet`).
  func curlRun(inFlight: Int) throws -> (run: CurlFleet.Run, cpu: CPUSpan.PerRequest) {
    let cpu = CPUSpan(serverCPU: serverCPU)
    let run = try CurlFleet(
      url: url, body: body, headers: headers, deadlineSeconds: FleetBenchmark.deadline.components.seconds
    ).run(processes: inFlight, requestsEach: 1 + FleetBenchmark.warmEach)
    return (run, cpu.end(requests: (1 + FleetBenchmark.warmEach) * inFlight))
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
  var cpu: CPUSpan.PerRequest

  /// Σ latency / wall over both phases (Little's law).
  var meanInFlight: Double {
    (cold.latencies + warm.latencies).reduce(0, +) / (cold.wall + warm.wall)
  }

  /// All requests of both phases over their wall time, per second.
  var throughput: Double {
    Double(cold.latencies.count + warm.latencies.count) / ((cold.wall + warm.wall) / 1000)
  }
}

/// CPU spent from its start to `end`: this process's own, its reaped
/// children's (the curl processes), and the server's.
struct CPUSpan {
  let serverCPU: @Sendable () -> Double
  private let own = ProcessCPU.own
  private let children = ProcessCPU.children
  private let server: Double

  init(serverCPU: @escaping @Sendable () -> Double) {
    self.serverCPU = serverCPU
    self.server = serverCPU()
  }

  /// Microseconds per request.
  struct PerRequest {
    var own: Double
    var children: Double
    var server: Double
  }

  func end(requests: Int) -> PerRequest {
    let scale = 1000 / Double(requests)
    return PerRequest(
      own: (ProcessCPU.own - own) * scale, children: (ProcessCPU.children - children) * scale,
      server: (serverCPU() - server) * scale)
  }
}
