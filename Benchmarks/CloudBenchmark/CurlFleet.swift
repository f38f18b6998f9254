import Foundation

/// curl with N requests truly in flight, timed as the library is: N curl
/// processes, each sending its requests one after another on one
/// connection (the first opens it: cold; the rest reuse it: warm).
///
/// Why processes and not one `curl --parallel` run: in one `--parallel`
/// process, a transfer's `time_total` starts when curl takes it from its
/// queue and runs while one thread drives every transfer, so its warm figure
/// is the time on the wire, not from the moment the request was asked for,
/// and how many are really in flight is not known (curl 7.88 has no
/// `%{time_queue}`). A sequential curl starts a transfer
/// the moment the previous one ends, so its `time_total` is the latency a
/// caller would see, and N processes are N in flight.
///
/// All N start at once: each reads its configuration from stdin (`-K -`),
/// so every process is up and waiting before the first request is asked;
/// then the configurations are written, one after another (microseconds
/// each). The run's mean number in flight is Little's law: the sum of the
/// latencies over the time from the first request's start to the last one's
/// end, read from curl's `--verbose --trace-time` lines (each transfer's
/// "left intact" line is its end, minus `time_total` its start), as the
/// client's is over its own runs.
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
    /// All requests over the time from the first start to the last end, per second.
    var throughput: Double
  }

  /// `processes` curls, each sending `requestsEach` requests in a row.
  func run(processes: Int, requestsEach: Int) throws -> Run {
    let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    var config = "silent\nmax-time = \(deadlineSeconds)\ndata = \"\(escaped)\"\n"
    config += headers.map { "header = \"\($0)\"\n" }.joined()
    config += "verbose\ntrace-time\nwrite-out = \"%{http_code} %{num_connects} %{time_total}\\n\"\n"
    config += String(repeating: "url = \"\(url)\"\noutput = \"/dev/null\"\n", count: requestsEach)
    let configuration = Data(config.utf8)

    // Output goes to files, read after the exits: a process's trace of
    // `requestsEach` transfers can be more than a pipe holds, and a curl
    // blocked on a full pipe would never exit.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-fleet-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var children: [(process: Process, stdin: Pipe, stdout: URL, stderr: URL)] = []
    for index in 0..<processes {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["curl", "-K", "-"]
      let stdin = Pipe()
      let stdout = directory.appendingPathComponent("\(index).out")
      let stderr = directory.appendingPathComponent("\(index).err")
      _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
      _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
      let outputs = (try FileHandle(forWritingTo: stdout), try FileHandle(forWritingTo: stderr))
      process.standardInput = stdin
      process.standardOutput = outputs.0
      process.standardError = outputs.1
      try process.run()
      // The child holds its own copies.
      try? outputs.0.close()
      try? outputs.1.close()
      children.append((process, stdin, stdout, stderr))
    }
    // Every curl up and blocked on its stdin before the first is released
    // (a process start is a few ms on these cores).
    Thread.sleep(forTimeInterval: 0.3 + 0.01 * Double(processes))
    let start = ContinuousClock.now
    for child in children {
      child.stdin.fileHandleForWriting.write(configuration)
      try? child.stdin.fileHandleForWriting.close()
    }
    var outputs: [(stdout: Data, stderr: Data)] = []
    for child in children {
      child.process.waitUntilExit()
      outputs.append(((try? Data(contentsOf: child.stdout)) ?? Data(), (try? Data(contentsOf: child.stderr)) ?? Data()))
    }
    let wall = milliseconds(ContinuousClock.now - start)
    var cold: [Double] = []
    var warm: [Double] = []
    var failed = 0
    var first = Double.infinity
    var last = -Double.infinity
    for output in outputs {
      let ends = Self.transferEnds(output.stderr)
      let lines = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n")
      for (index, line) in lines.enumerated() where index < ends.count {
        guard let seconds = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
        first = min(first, ends[index] - seconds)
        last = max(last, ends[index])
      }
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
    let active = last > first ? (last - first) * 1000 : wall
    return Run(
      cold: Measurement(latencies: cold, wall: wall), warm: Measurement(latencies: warm, wall: wall),
      failed: failed, meanInFlight: total / active, throughput: Double(cold.count + warm.count) / (active / 1000))
  }

  /// The time of day (seconds) each transfer ended: curl's
  /// "* Connection #N to host ... left intact" lines under `--trace-time`.
  static func transferEnds(_ stderr: Data) -> [Double] {
    String(decoding: stderr, as: UTF8.self).split(separator: "\n").compactMap { line in
      guard line.contains("left intact"), let stamp = line.split(separator: " ").first else { return nil }
      let parts = stamp.split(separator: ":")
      guard parts.count == 3, let hours = Double(parts[0]), let minutes = Double(parts[1]),
        let seconds = Double(parts[2])
      else { return nil }
      return hours * 3600 + minutes * 60 + seconds
    }
  }
}
