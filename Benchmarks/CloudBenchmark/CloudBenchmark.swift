import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Measures the cloud client against the loopback Gemini server, beside curl.
///
///     swift run -c release cloud-benchmark [--requests N] [--concurrency C] [--streams S] [--local-model GGUF]
///     swift run -c release cloud-benchmark dead-link [--requests N]
///     swift run -c release cloud-benchmark sse [RUNS]
///     swift run -c release cloud-benchmark streaming [BUDGET_SECONDS]
///     swift run -c release cloud-benchmark fleet --local-model GGUF [--transport urlSession|automatic] [--only fleet|llama]
///     swift run -c release cloud-benchmark template-parity --local-model GGUF
///     swift run -c release cloud-benchmark hedging [--requests N]
///
/// Prints, as Markdown (read into Benchmarks/RESULTS.md by make bench): the median
/// per-request latency of N sequential and of N concurrent (C in flight)
/// unary requests through `CloudGeminiModel` and through curl doing the same
/// requests, the client's overhead per request (the difference), and the
/// streaming delivery delay: from the server writing an event (its send time
/// travels in the event) to the snapshot reaching the caller of
/// `GenerativeModelSession.streamResponse`. Last, or alone with `dead-link`:
/// prefer cloud on a dead link, once the offline verdict is remembered. The
/// `sse` mode measures one large streamed event instead (`SSEThroughput`);
/// `streaming`, the cost of a delta in a long stream (`StreamingCost`).
@main
struct CloudBenchmark {
  static func main() async {
    do {
      try await run()
    } catch {
      FileHandle.standardError.write(Data("CloudBenchmark failed: \(error)\n".utf8))
      exit(1)
    }
  }

  static func run() async throws {
    if CommandLine.arguments.dropFirst().first == "sse" {
      // `cloud-benchmark sse [RUNS]`: only the large-event figures.
      let runs = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init) ?? 5
      let server = try LoopbackServer()
      defer { server.stop() }
      print(SSEThroughput.markdown(try await SSEThroughput.measure(server: server, runs: runs), runs: runs))
      return
    }
    if CommandLine.arguments.dropFirst().first == "chunks" {
      // `cloud-benchmark chunks [RUNS]`: a body in tiny chunks beside curl.
      let runs = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init) ?? 5
      let server = try LoopbackServer()
      defer { server.stop() }
      print(TinyChunks.markdown(try await TinyChunks.measure(server: server, runs: runs), runs: runs))
      return
    }
    if CommandLine.arguments.dropFirst().first == "streaming" {
      // `cloud-benchmark streaming [BUDGET_SECONDS]`: the streaming cost per delta, a child per row.
      try StreamingCost.run(budget: CommandLine.arguments.dropFirst(2).first.flatMap(Double.init) ?? 60)
      return
    }
    if CommandLine.arguments.dropFirst().first == "streaming-row" {
      try await StreamingCost.runRow(Array(CommandLine.arguments.dropFirst(2)))
      return
    }
    if CommandLine.arguments.dropFirst().first == "fleet" {
      // `cloud-benchmark fleet --local-model GGUF`: remote clients at scale beside curl.
      let arguments = Arguments(Array(CommandLine.arguments.prefix(1) + CommandLine.arguments.dropFirst(2)))
      guard let model = arguments.localModelPath else {
        throw LlamaBenchmarkError(description: "fleet needs --local-model GGUF")
      }
      try await FleetBenchmark.run(
        modelPath: model, transport: arguments.transport, only: arguments.only.flatMap(FleetBenchmark.Only.init))
      return
    }
    if CommandLine.arguments.dropFirst().first == "fleet-loop" {
      // `cloud-benchmark fleet-loop client|bare|openai|openai-bare [N] [ROUNDS]`: one path only, for perf.
      let arguments = Array(CommandLine.arguments.dropFirst(2))
      try await FleetBenchmark.loop(
        arguments.first ?? "client", inFlight: arguments.dropFirst().first.flatMap(Int.init) ?? 32,
        rounds: arguments.dropFirst(2).first.flatMap(Int.init) ?? 20)
      return
    }
    if CommandLine.arguments.dropFirst().first == "fleet-server" {
      // The fleet benchmark's loopback server, as its child process.
      try FleetServer.serve()
    }
    if CommandLine.arguments.dropFirst().first == "hedging" {
      // `cloud-benchmark hedging [--requests N]`: hedged requests.
      let arguments = Arguments(Array(CommandLine.arguments.prefix(1) + CommandLine.arguments.dropFirst(2)))
      let server = try LoopbackServer()
      defer { server.stop() }
      print(Hedging.markdown(try await Hedging.measure(server: server, requests: arguments.requests)))
      return
    }
    if CommandLine.arguments.dropFirst().first == "template-parity" {
      // `cloud-benchmark template-parity --local-model GGUF`: greedy parity with llama-server's template.
      let arguments = Arguments(Array(CommandLine.arguments.prefix(1) + CommandLine.arguments.dropFirst(2)))
      guard let model = arguments.localModelPath else {
        throw LlamaBenchmarkError(description: "template-parity needs --local-model GGUF")
      }
      try await TemplateParity.run(modelPath: model)
      return
    }
    let arguments = Arguments(CommandLine.arguments)
    let server = try LoopbackServer()
    defer { server.stop() }
    if arguments.deadLinkOnly {
      let figures = try await DeadLink.measure(server: server, requests: min(arguments.requests, 100))
      print(DeadLink.markdown(figures, requests: min(arguments.requests, 100)))
      return
    }
    let requestOptions = RequestOptions(timeout: .seconds(60), retryPolicy: .none)
    let model = CloudGeminiModel(
      name: "echo", apiKey: LoopbackServer.apiKey, baseURL: server.baseURL,
      requestOptions: requestOptions, logHandler: .silent)
    let prompt = "Why is the sky blue?"
    let request = ModelRequest(transcript: Transcript(entries: [.prompt(prompt)]))

    for _ in 0..<20 { _ = try await model.respond(to: request) }  // warm up

    let sequential = try await measure(arguments.requests, concurrency: 1) {
      _ = try await model.respond(to: request)
    }
    let concurrent = try await measure(arguments.requests, concurrency: arguments.concurrency) {
      _ = try await model.respond(to: request)
    }
    let bare = BareURLSession(server: server, prompt: prompt)
    let bareSession = bare.makeSession()
    defer { bareSession.finishTasksAndInvalidate() }
    for _ in 0..<20 { await bare.post(on: bareSession) }  // warm up
    let bareSequential = try await measure(arguments.requests, concurrency: 1) {
      await bare.post(on: bareSession)
    }
    let bareConcurrent = try await measure(arguments.requests, concurrency: arguments.concurrency) {
      await bare.post(on: bareSession)
    }
    let curl = try Curl(server: server, prompt: prompt)
    _ = try curl.run(requests: 20, parallel: 1)  // warm up
    let curlSequential = try curl.run(requests: arguments.requests, parallel: 1)
    let curlConcurrent = try curl.run(requests: arguments.requests, parallel: arguments.concurrency)
    let delivery = try await streamingDelivery(server: server, streams: arguments.streams)

    let report = Report(
      arguments: arguments, sequential: sequential, concurrent: concurrent,
      bareSequential: bareSequential, bareConcurrent: bareConcurrent, curlSequential: curlSequential,
      curlConcurrent: curlConcurrent, delivery: delivery)
    print(report.markdown)
    let routing = try await RoutingOverhead.measure(
      server: server, requests: arguments.requests, localModelPath: arguments.localModelPath)
    print(RoutingOverhead.markdown(routing))
    let deadLink = try await DeadLink.measure(server: server, requests: min(arguments.requests, 100))
    print(DeadLink.markdown(deadLink, requests: min(arguments.requests, 100)))
  }

  /// Runs `count` calls of `body` with `concurrency` in flight; returns each
  /// call's latency in milliseconds and the wall time of the whole run.
  static func measure(
    _ count: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void
  ) async throws -> Measurement {
    let start = ContinuousClock.now
    let latencies = try await withThrowingTaskGroup(of: Double.self) { group in
      var started = 0
      var latencies: [Double] = []
      func launch() {
        group.addTask {
          let begin = ContinuousClock.now
          try await body()
          return milliseconds(ContinuousClock.now - begin)
        }
        started += 1
      }
      while started < min(concurrency, count) { launch() }
      while let latency = try await group.next() {
        latencies.append(latency)
        if started < count { launch() }
      }
      return latencies
    }
    return Measurement(latencies: latencies, wall: milliseconds(ContinuousClock.now - start))
  }

  /// Streams `echo~gap-300~stamp-1` `streams` times; the second event is sent
  /// 300 ms after the first, while the client waits idle, like a model's
  /// next token. Returns the delay of each first and second event.
  static func streamingDelivery(server: LoopbackServer, streams: Int) async throws -> (
    first: [Double], later: [Double]
  ) {
    let model = CloudGeminiModel(
      name: "echo~gap-300~stamp-1", apiKey: LoopbackServer.apiKey, baseURL: server.baseURL,
      requestOptions: RequestOptions(retryPolicy: .none), logHandler: .silent)
    var first: [Double] = []
    var later: [Double] = []
    for _ in 0..<streams {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      var index = 0
      for try await snapshot in session.streamResponse(to: "stream") {
        let now = Date().timeIntervalSince1970 * 1000
        guard let sent = snapshot.rawResponse.responseId.flatMap(Double.init) else { continue }
        let delay = now - sent / 1_000_000
        if index == 0 { first.append(delay) } else if index == 1 { later.append(delay) }
        index += 1
      }
    }
    return (first, later)
  }
}

/// A benchmark that cannot run as asked.
struct LlamaBenchmarkError: Error, CustomStringConvertible {
  let description: String
}

func milliseconds(_ duration: Duration) -> Double {
  duration / .milliseconds(1)
}

/// Latencies of one run.
struct Measurement {
  var latencies: [Double]
  var wall: Double

  var median: Double { percentile(0.5) }
  var p90: Double { percentile(0.9) }
  var throughput: Double { Double(latencies.count) / (wall / 1000) }

  func percentile(_ fraction: Double) -> Double {
    let sorted = latencies.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
  }
}

/// `--requests N --concurrency C --streams S`.
struct Arguments {
  var requests = 300
  var concurrency = 32
  var streams = 20
  /// A GGUF for the prefer-cloud-offline figure; without it that figure is skipped.
  var localModelPath: String?
  /// `fleet --transport urlSession|automatic`: the client path measured.
  var transport = FleetTransport.automatic
  /// `fleet --only fleet|llama`: only the fleet server's rows, or only
  /// llama-server's with the large HTTP pool (the goal's server).
  var only: String?
  /// `dead-link`: only the dead-link figures.
  var deadLinkOnly = false
  var commandLine: String

  init(_ arguments: [String]) {
    commandLine = (["swift run -c release cloud-benchmark"] + arguments.dropFirst()).joined(separator: " ")
    var iterator = arguments.dropFirst().makeIterator()
    while let flag = iterator.next() {
      if flag == "dead-link" {
        deadLinkOnly = true
        continue
      }
      let argument = iterator.next()
      let value = argument.flatMap(Int.init)
      switch flag {
      case "--local-model": localModelPath = argument
      case "--requests": requests = value ?? requests
      case "--concurrency": concurrency = value ?? concurrency
      case "--streams": streams = value ?? streams
      case "--transport":
        guard let parsed = argument.flatMap(FleetTransport.init(rawValue:)) else {
          FileHandle.standardError.write(Data("--transport is urlSession or automatic\n".utf8))
          exit(2)
        }
        transport = parsed
      case "--only": only = argument
      default: FileHandle.standardError.write(Data("ignoring \(flag)\n".utf8))
      }
    }
  }
}
