import Foundation

/// curl with N requests truly in flight, timed as the library is: N curl
/// processes, each sending its requests one after another on one
/// connection (the first opens it: cold; the rest reuse it: warm).
///
/// Why processes and not one `curl --parallel` run (this benchmark before):
/// in one `--parallel` process, a transfer's `time_total` starts when curl
/// takes it from its queue and runs while one thread drives every transfer,
/// so its warm figure was the time on the wire, not from the moment the
/// request was asked for, and how many were really in flight was not known
/// (curl 7.88 has no `%{time_queue}`). A sequential curl starts a transfer
/// the moment the previous one ends, so its `time_total` is the latency a
/// caller would see, and N processes are N in flight.
///
/// All N start at once: each reads its configuration from stdin (`-K -`),
/// so every process is up and waiting before the first request is asked;
/// then the configurations are written, one after another (microseconds
/// each). The run's mean number in flight is Little's law, the sum of the
/// latencies over the wall time from that release to the last exit.
struct CurlFleet {
  let url: String
  let body: String
  let headers: [String]
  let deadlineSeconds: Int64

  struct Run {
    var cold: Measurement
    var warm: Measurement
    /// Requests that did not end in a 200 (or timed out).
    var failed: Int
    /// Σ latency / wall: how many requests were in flight on average.
    var meanInFlight: Double
    /// All requests over the wall time, per second.
    var throughput: Double
  }

  /// `processes` curls, each sending `requestsEach` requests in a row.
  func run(processes: Int, requestsEach: Int) throws -> Run {
    let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    var config = "silent\nmax-time = \(deadlineSeconds)\ndata = \"\(escaped)\"\n"
    config += headers.map { "header = \"\($0)\"\n" }.joined()
    config += "write-out = \"%{http_code} %{num_connects} %{time_total}\\n\"\n"
    config += String(repeating: "url = \"\(url)\"\noutput = \"/dev/null\"\n", count: requestsEach)
    let configuration = Data(config.utf8)

    var children: [(process: Process, stdin: Pipe, stdout: Pipe)] = []
    for _ in 0..<processes {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["curl", "-K", "-"]
      let stdin = Pipe()
      let stdout = Pipe()
      process.standardInput = stdin
      process.standardOutput = stdout
      try process.run()
      children.append((process, stdin, stdout))
    }
    // Every curl up and blocked on its stdin before the first is released
    // (a process start is a few ms on these cores).
    Thread.sleep(forTimeInterval: 0.3 + 0.01 * Double(processes))
    let start = ContinuousClock.now
    for child in children {
      child.stdin.fileHandleForWriting.write(configuration)
      try? child.stdin.fileHandleForWriting.close()
    }
    var outputs: [Data] = []
    for child in children {
      // A few lines each: they fit in the pipe, so reading after the exit is safe.
      child.process.waitUntilExit()
      outputs.append(child.stdout.fileHandleForReading.readDataToEndOfFile())
    }
    let wall = milliseconds(ContinuousClock.now - start)
    var cold: [Double] = []
    var warm: [Double] = []
    var failed = 0
    for output in outputs {
      let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
      failed += max(0, requestsEach - lines.count)
      for line in lines {
        let fields = line.split(separator: " ")
        guard fields.count == 3, let connects = Int(fields[1]), let seconds = Double(fields[2]) else {
          failed += 1
          continue
        }
        if fields[0] != "200" { failed += 1 }
        if connects > 0 { cold.append(seconds * 1000) } else { warm.append(seconds * 1000) }
      }
    }
    let total = (cold + warm).reduce(0, +)
    return Run(
      cold: Measurement(latencies: cold, wall: wall), warm: Measurement(latencies: warm, wall: wall),
      failed: failed, meanInFlight: total / wall, throughput: Double(cold.count + warm.count) / (wall / 1000))
  }
}
