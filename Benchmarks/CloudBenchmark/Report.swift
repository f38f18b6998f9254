import Foundation

/// The benchmark's figures as Markdown (scripts/results-tables.py reads them into Benchmarks/RESULTS.md).
struct Report {
  let arguments: Arguments
  let sequential: Measurement
  let concurrent: Measurement
  let bareSequential: Measurement
  let bareConcurrent: Measurement
  let curlSequential: Measurement
  let curlConcurrent: Measurement
  let delivery: (first: [Double], later: [Double])

  var markdown: String {
    let firstDelay = Measurement(latencies: delivery.first, wall: 1)
    let laterDelay = Measurement(latencies: delivery.later, wall: 1)
    return """
      ## Cloud client

      - Machine: \(ProcessInfo.processInfo.activeProcessorCount) CPUs (nproc), \(cpuModel())
      - Commit: \(shell("git", "-C", LoopbackServer.repositoryRoot.path, "rev-parse", "--short", "HEAD"))
      - Command: `\(arguments.commandLine)`
      - Date: \(ISO8601DateFormatter().string(from: Date()))
      - Server: Tests/GeminiServer/gemini_server.py on 127.0.0.1 (Python ThreadingHTTPServer), \
      `echo` answers, keep-alive HTTP/1.1

      Unary `:generateContent`, \(arguments.requests) requests per row, latency per request in ms:

      | client | in flight | median | p90 | requests/s |
      | --- | ---: | ---: | ---: | ---: |
      | CloudGeminiModel | 1 | \(f(sequential.median)) | \(f(sequential.p90)) | \(f(sequential.throughput, 0)) |
      | bare URLSession (delegate) | 1 | \(f(bareSequential.median)) | \(f(bareSequential.p90)) | \(f(bareSequential.throughput, 0)) |
      | curl | 1 | \(f(curlSequential.median)) | \(f(curlSequential.p90)) | \(f(curlSequential.throughput, 0)) |
      | CloudGeminiModel | \(arguments.concurrency) | \(f(concurrent.median)) | \(f(concurrent.p90)) | \(f(concurrent.throughput, 0)) |
      | bare URLSession (delegate) | \(arguments.concurrency) | \(f(bareConcurrent.median)) | \(f(bareConcurrent.p90)) | \(f(bareConcurrent.throughput, 0)) |
      | curl --parallel | \(arguments.concurrency) | \(f(curlConcurrent.median)) | \(f(curlConcurrent.p90)) | \(f(curlConcurrent.throughput, 0)) |

      Client overhead per request (median CloudGeminiModel minus median curl): \
      \(f(sequential.median - curlSequential.median)) ms sequential, \
      \(f(concurrent.median - curlConcurrent.median)) ms at \(arguments.concurrency) in flight. \
      Of that, FoundationNetworking's own share (bare URLSession minus curl): \
      \(f(bareSequential.median - curlSequential.median)) ms sequential, \
      \(f(bareConcurrent.median - curlConcurrent.median)) ms concurrent; the library's share \
      (CloudGeminiModel minus bare URLSession: JSON encoding and decoding, timers, streams, \
      checks): \(f(sequential.median - bareSequential.median)) ms sequential, \
      \(f(concurrent.median - bareConcurrent.median)) ms concurrent.

      Streaming delivery delay (server writes an event → the snapshot reaches the caller of \
      `GenerativeModelSession.streamResponse`), \(arguments.streams) streams, ms: \
      first event median \(f(firstDelay.median)) (p90 \(f(firstDelay.p90))); \
      event sent 300 ms after the first, median \(f(laterDelay.median)) (p90 \(f(laterDelay.p90))).
      """
  }

  private func f(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
  }

  private func cpuModel() -> String {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
    let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
    return line.map { $0.split(separator: ":", maxSplits: 1).last.map(String.init) ?? "" }?
      .trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
  }

  private func shell(_ arguments: String...) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    guard (try? process.run()) != nil else { return "unknown" }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
