import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// What routing costs ("Cloud client beside curl").
///
/// - Prefer on-device with the local model unavailable, against only-cloud, on
///   the same loopback requests: the extra latency of checking availability,
///   logging the fallback and switching models.
/// - Prefer cloud with the cloud's port closed: time until the local answer's
///   first snapshot, minus the same figure for only-on-device.
enum RoutingOverhead {
  struct Figures {
    var onlyCloud: Measurement
    var preferOnDeviceFallingBack: Measurement
    var onlyOnDeviceFirstToken: Measurement?
    var preferCloudOfflineFirstToken: Measurement?
  }

  static func measure(server: LoopbackServer, requests: Int, localModelPath: String?) async throws -> Figures {
    let cloud = CloudGeminiModel(
      name: "echo", apiKey: LoopbackServer.apiKey, baseURL: server.baseURL,
      requestOptions: RequestOptions(retryPolicy: .none), logHandler: .silent)
    let missingLocal = LocalSystemModel(modelPath: "/nonexistent/model.gguf")
    let hybrid = HybridModel(primary: missingLocal, secondary: cloud)
    for _ in 0..<20 { _ = try await respond(cloud) }  // warm up
    // Interleaved, so that both see the same machine load.
    var onlyCloud: [Double] = []
    var fallingBack: [Double] = []
    for _ in 0..<requests {
      onlyCloud.append(try await timed { _ = try await respond(cloud) })
      fallingBack.append(try await timed { _ = try await respond(hybrid) })
    }
    var figures = Figures(
      onlyCloud: Measurement(latencies: onlyCloud, wall: 1),
      preferOnDeviceFallingBack: Measurement(latencies: fallingBack, wall: 1))
    if let localModelPath {
      let local = LocalSystemModel(modelPath: localModelPath, contextSize: 2048)
      try await local.prepare()
      let closed = CloudGeminiModel(
        name: "echo", apiKey: LoopbackServer.apiKey, baseURL: try closedPortURL(),
        requestOptions: RequestOptions(retryPolicy: .none), logHandler: .silent)
      let preferCloud = HybridModel(primary: closed, secondary: local)
      _ = try await firstSnapshot(local)  // warm up
      var onDevice: [Double] = []
      var offline: [Double] = []
      for _ in 0..<20 {
        onDevice.append(try await firstSnapshot(local))
        offline.append(try await firstSnapshot(preferCloud))
      }
      figures.onlyOnDeviceFirstToken = Measurement(latencies: onDevice, wall: 1)
      figures.preferCloudOfflineFirstToken = Measurement(latencies: offline, wall: 1)
    }
    return figures
  }

  private static func respond(_ model: some LanguageModel) async throws -> GenerativeModelSession.Response {
    try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Why is the sky blue?")
  }

  /// Milliseconds from the request to its first snapshot, on a fresh session.
  private static func firstSnapshot(_ model: some LanguageModel) async throws -> Double {
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 4))
    let start = ContinuousClock.now
    for try await _ in session.streamResponse(to: "Why is the sky blue?", options: options) {
      return milliseconds(ContinuousClock.now - start)
    }
    throw BenchmarkError("no snapshot")
  }

  private static func timed(_ body: () async throws -> Void) async throws -> Double {
    let start = ContinuousClock.now
    try await body()
    return milliseconds(ContinuousClock.now - start)
  }

  /// A loopback URL on which nothing listens: a port the kernel just handed
  /// out and that was closed again.
  private static func closedPortURL() throws -> URL {
    let server = try LoopbackServer()
    let url = server.baseURL
    server.stop()
    return url
  }

  static func markdown(_ figures: Figures) -> String {
    let extra = figures.preferOnDeviceFallingBack.median - figures.onlyCloud.median
    var text = """

      ## Routing overhead

      Prefer on-device with the on-device model unavailable (missing file) against only-cloud, \
      \(figures.onlyCloud.latencies.count) interleaved requests each on the loopback server, ms:

      | mode | median | p90 |
      | --- | ---: | ---: |
      | only cloud | \(format(figures.onlyCloud.median)) | \(format(figures.onlyCloud.p90)) |
      | prefer on-device, falling back | \(format(figures.preferOnDeviceFallingBack.median)) | \(format(figures.preferOnDeviceFallingBack.p90)) |

      Extra latency of the fallback: \(format(extra)) ms per request (target <= 1 ms).

      """
    if let onDevice = figures.onlyOnDeviceFirstToken, let offline = figures.preferCloudOfflineFirstToken {
      text += """

        Prefer cloud with the cloud's port closed: first snapshot (from the on-device model) after \
        \(format(offline.median)) ms, against \(format(onDevice.median)) ms for only-on-device; \
        the offline fallback costs \(format(offline.median - onDevice.median)) ms (target <= 50 ms).

        """
    }
    return text
  }

  private static func format(_ value: Double) -> String { String(format: "%.2f", value) }
}
