import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Offline costs one timeout, not one per request ("Cloud client beside curl").
///
/// The cloud's port is dead the way an unreachable host is: its accept queue
/// is full (`listen(0)`, then filled), so the kernel drops new SYNs and
/// connecting waits for the connect timeout. Prefer cloud with a fast
/// scripted on-device secondary: the first request pays the timeout; every
/// later one, with the verdict remembered, should reach the secondary's first
/// snapshot within 50 ms of the secondary asked alone.
enum DeadLink {
  struct Figures {
    var connectTimeout: Duration
    var first: Double
    var later: Measurement
    var secondaryAlone: Measurement
  }

  static func measure(server: LoopbackServer, requests: Int) async throws -> Figures {
    let connectTimeout = Duration.seconds(2)
    let cloud = CloudGeminiModel(
      name: "echo", apiKey: LoopbackServer.apiKey, baseURL: try await server.blackholeURL(),
      requestOptions: RequestOptions(timeout: .seconds(30), connectTimeout: connectTimeout, retryPolicy: .none),
      logHandler: .silent)
    let local = InstantLocalModel()
    let preferCloud = HybridModel(primary: cloud, secondary: local)
    for _ in 0..<20 { _ = try await firstSnapshot(local) }  // warm up
    let first = try await firstSnapshot(preferCloud)
    // Interleaved, so that both see the same machine load.
    var later: [Double] = []
    var alone: [Double] = []
    for _ in 0..<requests {
      later.append(try await firstSnapshot(preferCloud))
      alone.append(try await firstSnapshot(local))
    }
    return Figures(
      connectTimeout: connectTimeout, first: first, later: Measurement(latencies: later, wall: 1),
      secondaryAlone: Measurement(latencies: alone, wall: 1))
  }

  /// Milliseconds from the request to its first snapshot, on a fresh session.
  private static func firstSnapshot(_ model: some LanguageModel) async throws -> Double {
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let start = ContinuousClock.now
    for try await _ in session.streamResponse(to: "Why is the sky blue?") {
      return milliseconds(ContinuousClock.now - start)
    }
    throw BenchmarkError("no snapshot")
  }

  static func markdown(_ figures: Figures, requests: Int) -> String {
    let extra = figures.later.median - figures.secondaryAlone.median
    let worst = (figures.later.latencies.max() ?? .nan) - figures.secondaryAlone.median
    return """

      ## Dead link (remembered offline)

      - CPU: \(lscpuModelName())

      Prefer cloud, the cloud's loopback port with a full accept queue (SYNs dropped; connect \
      timeout \(f(milliseconds(figures.connectTimeout), 0)) ms), a scripted on-device secondary that \
      answers at once. Time to the first snapshot, ms, \(requests) requests each, interleaved:

      | request | median | p90 | max |
      | --- | ---: | ---: | ---: |
      | prefer cloud, first (learns the verdict) | \(f(figures.first)) | | |
      | prefer cloud, later (verdict remembered) | \(f(figures.later.median)) | \(f(figures.later.p90)) | \(f(figures.later.latencies.max() ?? .nan)) |
      | the secondary alone | \(f(figures.secondaryAlone.median)) | \(f(figures.secondaryAlone.p90)) | \(f(figures.secondaryAlone.latencies.max() ?? .nan)) |

      Later requests over the secondary alone: \(f(extra)) ms median, \(f(worst)) ms at worst \
      (target <= 50 ms).
      """
  }

  /// `Model name` from lscpu, else from /proc/cpuinfo.
  static func lscpuModelName() -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["lscpu"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    if (try? process.run()) != nil {
      let data = output.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      for line in String(decoding: data, as: UTF8.self).split(separator: "\n")
      where line.hasPrefix("Model name:") {
        return line.dropFirst("Model name:".count).trimmingCharacters(in: .whitespaces)
      }
    }
    return "unknown CPU"
  }

  private static func f(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
  }
}

/// An on-device model that answers "ok" at once: the benchmark measures
/// routing, not generation.
struct InstantLocalModel: LanguageModel {
  var modelVersion: String { "instant-local" }
  var placement: ModelPlacement { .onDevice }
  var availability: Availability { .available }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    ResponseDeltaStream(
      AsyncThrowingStream { continuation in
        continuation.yield(
          GenerateContentResponse(
            candidates: [Candidate(content: Content(role: "model", text: "ok"), finishReason: .stop)],
            modelVersion: modelVersion))
        continuation.finish()
      })
  }
}
