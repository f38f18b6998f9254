import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// "Hedged requests": what hedging (`HybridModel.hedgeAfter`) does to the
/// tail of time to first text, and what it costs in requests.
///
/// The loopback server answers `echo` after a heavy-tailed wait (90% of
/// requests 50 ms, 10% 3 s: `first-50~tail-3000~tailpct-10`, drawn from
/// the model name and the request number; the names carry the run's id, so
/// each run draws afresh and the two models' draws are independent). Without hedging: one cloud
/// model. With: a hybrid of two such models (separate draws), the secondary
/// asked when the primary has delivered nothing within `hedgeAfter`. The
/// extra requests are those the secondary received.
enum Hedging {
  struct Figures {
    var requests: Int
    var hedgeAfter: Duration
    var without: Measurement
    var with: Measurement
    var extraRequests: Int
  }

  static let latency = "first-50~tail-3000~tailpct-10"

  static func measure(server: LoopbackServer, requests: Int, hedgeAfter: Duration = .milliseconds(150))
    async throws -> Figures
  {
    let run = "\(getpid())-\(Int(Date().timeIntervalSince1970))"
    let options = RequestOptions(timeout: .seconds(60), retryPolicy: .none)
    func model(_ id: String) -> CloudGeminiModel {
      CloudGeminiModel(
        name: "echo~\(latency)~id-\(id)-\(run)", apiKey: LoopbackServer.apiKey, baseURL: server.baseURL,
        requestOptions: options, logHandler: .silent)
    }
    let alone = model("alone")
    let secondary = model("secondary")
    let hedged = HybridModel(primary: model("primary"), secondary: secondary, hedgeAfter: hedgeAfter)
    let without = try await firstText(alone, requests: requests)
    let with = try await firstText(hedged, requests: requests)
    let extra = try await server.requestCount(secondary.name)
    return Figures(requests: requests, hedgeAfter: hedgeAfter, without: without, with: with, extraRequests: extra)
  }

  /// Milliseconds from each request to its first snapshot with text, 16 in
  /// flight (the server sleeps per request, so they do not queue).
  private static func firstText(_ model: some LanguageModel, requests: Int) async throws -> Measurement {
    try await CloudBenchmark.measure(requests, concurrency: 16) {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      for try await snapshot in session.streamResponse(to: "Why is the sky blue?") where !snapshot.content.isEmpty {
        return
      }
      throw BenchmarkError("no text")
    }
  }

  static func markdown(_ figures: Figures) -> String {
    func f(_ value: Double) -> String { String(format: "%.0f", value) }
    func row(_ name: String, _ m: Measurement) -> String {
      let slow = Double(m.latencies.filter { $0 > 1000 }.count) / Double(max(1, m.latencies.count)) * 100
      return "| \(name) | \(f(m.median)) | \(f(m.p90)) | \(f(m.percentile(0.99))) | "
        + "\(f(m.latencies.max() ?? .nan)) | \(String(format: "%.1f", slow))% |"
    }
    let share = Double(figures.extraRequests) / Double(figures.requests) * 100
    return """

      ## Hedged requests (issue 25: p99 time to first text, and the requests it costs)

      - CPU: \(DeadLink.lscpuModelName())
      - Command: `swift run -c release cloud-benchmark hedging [--requests N]`
      - Server: the loopback Gemini server, `echo~\(latency)` (90% of requests wait 50 ms before \
      answering, 10% wait 3 s, drawn independently per model and request), \
      16 requests in flight

      Time to the first snapshot with text, ms, \(figures.requests) requests each:

      | routing | p50 | p90 | p99 | max | over 1 s |
      | --- | ---: | ---: | ---: | ---: | ---: |
      \(row("one cloud model", figures.without))
      \(row("hybrid of two, hedgeAfter \(f(milliseconds(figures.hedgeAfter))) ms", figures.with))

      Extra requests: \(figures.extraRequests) of \(figures.requests) (\(String(format: "%.1f", share))%), \
      the hedges sent to the secondary; each loser was cancelled when the other delivered.
      """
  }
}

extension LoopbackServer {
  /// How many requests the server received for `model` (GET /_stats).
  func requestCount(_ model: String) async throws -> Int {
    var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
    components?.path = "/_stats"
    components?.queryItems = [URLQueryItem(name: "model", value: model)]
    guard let url = components?.url else { throw BenchmarkError("no stats URL") }
    let (data, _) = try await URLSession.shared.data(from: url)
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    guard let count = object?["count"] as? Int else { throw BenchmarkError("the server gave no count") }
    return count
  }
}
