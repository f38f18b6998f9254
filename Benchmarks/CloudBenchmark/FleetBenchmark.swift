import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import OpenAIServers
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `cloud-benchmark fleet --local-model GGUF [--requests N]`: the
/// OpenAI-compatible backend against a real llama-server (`-np 4`) on
/// loopback.
///
/// What the client costs over curl doing the same requests (unary and
/// streamed, sequential and 32 in flight; one-token answers, so the server's
/// work is small and the same on both sides). The tokens/s of sessions at
/// once through llama-server beside the in-process model is
/// `local-benchmark concurrent`.
enum FleetBenchmark {
  static func run(modelPath: String, requests: Int) async throws {
    let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
    let server = try await LlamaServerProcess(
      model: modelPath, parallel: 4, contextSize: 4 * 1024, threads: threads)
    defer { server.stop() }
    let fleet = OpenAICompatibleModel(
      name: "fleet-model", baseURL: server.baseURL, apiKey: nil,
      requestOptions: RequestOptions(timeout: .seconds(30), retryPolicy: .none), logHandler: .silent)
    let oneToken = ModelRequest(
      transcript: Transcript(entries: [.prompt("Hi")]),
      options: .gemini(GenerationConfig(temperature: 0, maxOutputTokens: 1)))
    for _ in 0..<10 { _ = try await fleet.respond(to: oneToken) }  // warm up
    // First, so that a stall of the client below (see RESULTS.md) does not hide it.
    var bareRequest = URLRequest(url: server.baseURL.appendingPathComponent("chat/completions"))
    bareRequest.httpMethod = "POST"
    bareRequest.httpBody = Data(
      #"{"model":"fleet-model","messages":[{"role":"user","content":"Hi"}],"temperature":0,"max_tokens":1}"#.utf8)
    bareRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
    let bare = BareURLSession(request: bareRequest)
    let bareSession = bare.makeSession()
    defer { bareSession.finishTasksAndInvalidate() }
    let bareUnary32 = try await CloudBenchmark.measure(requests, concurrency: 32) { await bare.post(on: bareSession) }
    FileHandle.standardError.write(
      Data("fleet: bare URLSession, 32 in flight: median \(format(bareUnary32.median)) ms\n".utf8))

    // A request that fails (its 30 s deadline) counts with the time it took.
    let failures = Atomic<Int>(0)
    let unary = try await CloudBenchmark.measure(requests, concurrency: 1) {
      do { _ = try await fleet.respond(to: oneToken) } catch { failures.add(1, ordering: .relaxed) }
    }
    let unaryFailed = failures.exchange(0, ordering: .relaxed)
    let unary32 = try await CloudBenchmark.measure(requests, concurrency: 32) {
      do { _ = try await fleet.respond(to: oneToken) } catch { failures.add(1, ordering: .relaxed) }
    }
    let unary32Failed = failures.exchange(0, ordering: .relaxed)
    let streamed = try await CloudBenchmark.measure(requests, concurrency: 1) {
      do { for try await _ in fleet.streamResponse(to: oneToken) {} } catch { failures.add(1, ordering: .relaxed) }
    }
    let streamedFailed = failures.exchange(0, ordering: .relaxed)
    let streamed32 = try await CloudBenchmark.measure(requests, concurrency: 32) {
      do { for try await _ in fleet.streamResponse(to: oneToken) {} } catch { failures.add(1, ordering: .relaxed) }
    }
    let streamed32Failed = failures.exchange(0, ordering: .relaxed)
    let url = server.baseURL.appendingPathComponent("chat/completions").absoluteString
    let body = #"{"model":"fleet-model","messages":[{"role":"user","content":"Hi"}],"temperature":0,"max_tokens":1"#
    let curlUnary = try curl(url: url, body: body + "}", requests: requests, parallel: 1)
    let curlUnary32 = try curl(url: url, body: body + "}", requests: requests, parallel: 32)
    let streamBody = body + #","stream":true,"stream_options":{"include_usage":true}}"#
    let curlStreamed = try curl(url: url, body: streamBody, requests: requests, parallel: 1)
    let curlStreamed32 = try curl(url: url, body: streamBody, requests: requests, parallel: 32)

    print("## OpenAI-compatible client beside curl (llama-server -np 4, one-token answers, \(requests) requests)")
    print()
    print("| path | client median ms | curl median ms | overhead ms | client requests failed |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for (name, ours, theirs, failed) in [
      ("unary, sequential", unary, curlUnary, unaryFailed),
      ("unary, 32 in flight", unary32, curlUnary32, unary32Failed),
      ("streamed, sequential", streamed, curlStreamed, streamedFailed),
      ("streamed, 32 in flight", streamed32, curlStreamed32, streamed32Failed),
      ("unary, 32 in flight, bare URLSession (no library)", bareUnary32, curlUnary32, 0),
    ] {
      print(
        "| \(name) | \(format(ours.median)) | \(format(theirs.median)) | \(format(ours.median - theirs.median)) | \(failed) |"
      )
    }
    print()
  }

  /// curl doing `requests` POSTs of `body` (`parallel` at once), each
  /// transfer's total time in milliseconds.
  static func curl(url: String, body: String, requests: Int, parallel: Int) throws -> Measurement {
    let config = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString).curl")
    defer { try? FileManager.default.removeItem(at: config) }
    let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    let one =
      "url = \"\(url)\"\ndata = \"\(escaped)\"\nheader = \"Content-Type: application/json\"\n"
      + "output = \"/dev/null\"\nwrite-out = \"%{time_total}\\n\"\n"
    try (Array(repeating: one, count: requests).joined(separator: "next\n")).write(
      to: config, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments =
      ["curl", "-s", "--config", config.path] + (parallel > 1 ? ["--parallel", "--parallel-max", "\(parallel)"] : [])
    let output = Pipe()
    process.standardOutput = output
    let start = ContinuousClock.now
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let latencies = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { Double($0) }
      .map { $0 * 1000 }
    return Measurement(latencies: latencies, wall: milliseconds(ContinuousClock.now - start))
  }

  static func format(_ value: Double) -> String { String(format: "%.2f", value) }
}
