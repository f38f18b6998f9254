import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceRemote

/// A body in tiny chunks, beside curl: a server (or a proxy) that frames
/// every byte of a 1 MB answer as a chunk of its own (`1\r\nx\r\n`, six
/// bytes on the wire a byte of body) is hostile input the client reads at
/// curl's pace or near it, since one poller thread reads every response of
/// a client and a slow parse there would hold up the others.
///
/// The loopback server sends one unary answer (`fault-huge~size-N~chunk-C`)
/// whose JSON is framed in chunks of C bytes; the library's figure is
/// `GenerativeModelSession.respond` from the call to the decoded answer
/// (transport, JSON decoding, checks), curl's its `time_total` for the same
/// request. Runs alternate, so both see the same machine.
enum TinyChunks {
  static let size = 1_000_000
  static let chunkSizes = [1, 64, 65536]

  struct Row {
    var chunk: Int
    var library: [Double]
    var curl: [Double]
  }

  static func measure(server: LoopbackServer, runs: Int) async throws -> [Row] {
    let options = RequestOptions(timeout: .seconds(120), retryPolicy: .none, maximumResponseBytes: 64 << 20)
    var rows: [Row] = []
    for chunk in chunkSizes {
      let name = "fault-huge~size-\(size)~chunk-\(chunk)"
      let model = CloudGeminiModel(
        name: name, apiKey: LoopbackServer.apiKey, baseURL: server.baseURL, requestOptions: options,
        logHandler: .silent)
      let curl = try Curl(server: server, prompt: "big", model: name)
      var row = Row(chunk: chunk, library: [], curl: [])
      for run in 0...runs {
        let session = GenerativeModelSession(model: model, logHandler: .silent)
        let start = ContinuousClock.now
        let answer = try await session.respond(to: "big")
        let library = milliseconds(ContinuousClock.now - start)
        guard answer.content.utf8.count == size else {
          throw BenchmarkError("expected \(size) bytes of text, got \(answer.content.utf8.count)")
        }
        let curlTime = try curl.run(requests: 1, parallel: 1).median
        if run > 0 {  // run 0 warms up (and has the server frame the body)
          row.library.append(library)
          row.curl.append(curlTime)
        }
      }
      rows.append(row)
    }
    return rows
  }

  static func markdown(_ rows: [Row], runs: Int) -> String {
    var lines = [
      "## 6c. A body in tiny chunks beside curl (hostile framing: read at curl's pace or near it)",
      "",
      "- CPU: \(SSEThroughput.cpuModel()) (lscpu \"Model name\"), \(ProcessInfo.processInfo.activeProcessorCount) CPUs",
      "- One unary answer of \(size / 1_000_000) MB of text from the loopback server, framed in chunks of N bytes; "
        + "`GenerativeModelSession.respond` beside curl's `time_total`, alternated, median of \(runs) runs after "
        + "one warm-up",
      "",
      "| chunk | library median ms | curl median ms | library / curl |",
      "| ---: | ---: | ---: | ---: |",
    ]
    for row in rows {
      let (library, curl) = (median(row.library), median(row.curl))
      lines.append(
        "| \(row.chunk) B | \(SSEThroughput.format(library)) | \(SSEThroughput.format(curl)) | "
          + "\(SSEThroughput.format(library / curl)) |")
    }
    return lines.joined(separator: "\n")
  }

  private static func median(_ values: [Double]) -> Double {
    values.isEmpty ? .nan : values.sorted()[values.count / 2]
  }
}
