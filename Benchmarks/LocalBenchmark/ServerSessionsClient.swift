import Foundation

/// Runs `scripts/llama-server-sessions.py` against a llama-server: the
/// server's side of `local-benchmark concurrent`, timed inside the Python
/// client (connections opened first, clock from the first request sent to
/// the last reply), so neither this process's HTTP stack nor Python's start
/// is in the figure.
struct ServerSessionsClient {
  let port: Int
  let script: URL

  init(port: Int) throws {
    self.port = port
    // Benchmarks/LocalBenchmark/ServerSessionsClient.swift -> scripts/...
    script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("scripts/llama-server-sessions.py")
    guard FileManager.default.fileExists(atPath: script.path) else {
      throw ClientError(description: "no \(script.path)")
    }
  }

  struct ClientError: Error, CustomStringConvertible {
    let description: String
  }

  private struct Requests: Encodable {
    struct Request: Encodable {
      let prompt: [Int32]
      let predict: Int
      enum CodingKeys: String, CodingKey {
        case prompt
        case predict = "n_predict"
      }
    }
    let requests: [Request]
  }

  private struct Reply: Decodable {
    let tokens: Int
    let seconds: Double
    let prefilled: Int
  }

  /// Aggregate generated tokens per second of one request per prompt, all
  /// sent at once, as the server's replies count them, and how many prompt
  /// tokens the server decoded (the rest it took from its slots' caches).
  func aggregate(prompts: [[Int32]], tokens: Int) async throws -> ConcurrentSessions.Round {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("sessions-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }
    try JSONEncoder().encode(Requests(requests: prompts.map { .init(prompt: $0, predict: tokens) })).write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, "\(port)", file.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    // Read to the end (blocks in read(2)), then poll: `waitUntilExit()`
    // spins a core on a thread without a run loop, which would take one of
    // the server's two cores while it decodes.
    let data = output.fileHandleForReading.readDataToEndOfFile()
    while process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
    guard process.terminationStatus == 0, let reply = try? JSONDecoder().decode(Reply.self, from: data) else {
      throw ClientError(description: "the client failed: \(String(decoding: data, as: UTF8.self))")
    }
    return .init(tokensPerSecond: Double(reply.tokens) / reply.seconds, prefilled: reply.prefilled)
  }
}
