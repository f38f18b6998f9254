import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// "Large events and tiny chunks": one large streamed event, end to end, is linear in its size.
///
/// The loopback server sends an answer of N bytes of text as a single SSE event
/// in 64 KiB writes (`fault-huge~size-N`); the figure is the event's bytes per
/// second from the request to the stream's end, through
/// `GenerativeModelSession.streamResponse`: transport, SSE parsing, JSON
/// decoding, checks, the snapshot. Linear parsing shows as a rate that does
/// not fall with the size; the parser that rescanned the unfinished line on
/// every chunk fell from 3 MB/s at 1 MB to 0.8 MB/s at 20 MB.
enum SSEThroughput {
  static let sizes = [1_000_000, 5_000_000, 20_000_000]

  struct Row {
    var size: Int
    var seconds: [Double]
    var median: Double { seconds.sorted()[seconds.count / 2] }
    var bytesPerSecond: Double { Double(size) / median }
  }

  static func measure(server: LoopbackServer, runs: Int) async throws -> [Row] {
    // The default 16 MiB event limit would refuse the 20 MB event: raise it.
    let options = RequestOptions(
      timeout: .seconds(120), retryPolicy: .none, maximumResponseBytes: 64 << 20,
      maximumEventBytes: 64 << 20)
    var rows: [Row] = []
    for size in sizes {
      let model = CloudGeminiModel(
        name: "fault-huge~size-\(size)", apiKey: LoopbackServer.apiKey, baseURL: server.baseURL,
        requestOptions: options, logHandler: .silent)
      var row = Row(size: size, seconds: [])
      for run in 0...runs {
        let session = GenerativeModelSession(model: model, logHandler: .silent)
        let start = ContinuousClock.now
        var received = 0
        for try await snapshot in session.streamResponse(to: "big") { received = snapshot.content.utf8.count }
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        guard received == size else {
          throw BenchmarkError("expected \(size) bytes of text, got \(received)")
        }
        if run > 0 { row.seconds.append(elapsed) }  // run 0 warms up
      }
      rows.append(row)
    }
    return rows
  }

  static func markdown(_ rows: [Row], runs: Int) -> String {
    var lines = [
      "## One large SSE event, end to end (issue 9: linear in its size)",
      "",
      "- CPU: \(cpuModel()) (lscpu \"Model name\"), \(ProcessInfo.processInfo.activeProcessorCount) CPUs",
      "- One event of N bytes of text in 64 KiB writes from the loopback server, through "
        + "`GenerativeModelSession.streamResponse`; median of \(runs) runs after one warm-up",
      "",
      "| event | median time | throughput |",
      "| ---: | ---: | ---: |",
    ]
    for row in rows {
      lines.append(
        "| \(row.size / 1_000_000) MB | \(format(row.median * 1000)) ms | "
          + "\(format(row.bytesPerSecond / 1_000_000)) MB/s |")
    }
    if let first = rows.first, let last = rows.last {
      lines.append("")
      lines.append(
        "Throughput at \(last.size / 1_000_000) MB over throughput at \(first.size / 1_000_000) MB: "
          + "\(format(last.bytesPerSecond / first.bytesPerSecond)) (1.0 is linear).")
    }
    return lines.joined(separator: "\n")
  }

  static func format(_ value: Double) -> String { String(format: "%.2f", value) }

  /// `lscpu`'s "Model name", else /proc/cpuinfo's "model name".
  static func cpuModel() -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["lscpu"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    var text = ""
    if (try? process.run()) != nil {
      text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
    }
    if text.isEmpty { text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "" }
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: ":", maxSplits: 1)
      if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "model name" {
        return parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return "unknown CPU"
  }
}
