import Foundation
import GeminiServerProcess

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The test suite's Gemini server (Tests/GeminiServer/gemini_server.py), run
/// as a child process for the benchmark.
final class LoopbackServer {
  static let apiKey = "benchmark-key"
  static let repositoryRoot = GeminiServerProcess.repositoryRoot

  private let server: GeminiServerProcess
  var baseURL: URL { server.baseURL }

  init() throws {
    server = try GeminiServerProcess(apiKey: Self.apiKey)
  }

  func stop() { server.stop() }

  /// A loopback URL where connecting hangs: the server's port whose accept
  /// queue is full (GET /_blackhole).
  func blackholeURL() async throws -> URL {
    let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("_blackhole"))
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    guard let port = object?["port"] as? Int, let url = URL(string: "http://127.0.0.1:\(port)") else {
      throw BenchmarkError("the server gave no blackhole port")
    }
    return url
  }
}

/// curl doing the same unary requests: one process for all of them, so the
/// figures are per request (curl's `time_total`), not per process start.
struct Curl {
  let url: String
  let bodyFile: URL

  init(server: LoopbackServer, prompt: String, model: String = "echo") throws {
    url = server.baseURL.absoluteString + "/v1beta/models/\(model):generateContent"
    bodyFile = FileManager.default.temporaryDirectory
      .appendingPathComponent("cloud-benchmark-\(getpid()).json")
    let body = #"{"contents":[{"role":"user","parts":[{"text":"\#(prompt)"}]}]}"#
    try Data(body.utf8).write(to: bodyFile)
  }

  /// Runs `requests` POSTs, `parallel` at a time; returns their latencies (ms).
  func run(requests: Int, parallel: Int) throws -> Measurement {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    var arguments = [
      "curl", "--silent", "--show-error", "--no-progress-meter",
      "--write-out", "%{http_code} %{time_total}\\n",
      "--header", "Content-Type: application/json",
      "--header", "x-goog-api-key: \(LoopbackServer.apiKey)",
      "--data-binary", "@\(bodyFile.path)",
    ]
    if parallel > 1 { arguments += ["--parallel", "--parallel-max", "\(parallel)"] }
    for _ in 0..<requests { arguments += ["--output", "/dev/null", url] }
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    let start = ContinuousClock.now
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let wall = milliseconds(ContinuousClock.now - start)
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
    let latencies = lines.compactMap { line -> Double? in
      let fields = line.split(separator: " ")
      guard fields.count == 2, fields[0] == "200", let seconds = Double(fields[1]) else { return nil }
      return seconds * 1000
    }
    guard process.terminationStatus == 0, latencies.count == requests else {
      throw BenchmarkError(
        "curl failed: status \(process.terminationStatus), \(latencies.count) of \(requests) answers")
    }
    return Measurement(latencies: latencies, wall: wall)
  }
}

struct BenchmarkError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
