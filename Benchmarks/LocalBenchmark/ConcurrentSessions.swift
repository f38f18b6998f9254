import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import OpenAIServers

/// Aggregate decode speed of several sessions answering at once (issue 14,
/// goal 2): total generated tokens over the wall time, on the in-process
/// model (one context, a sequence per session) and on llama-server `-np 4`
/// (continuous batching in one context) with the same file, the same threads
/// and the same window per session, one right after the other in each run.
enum ConcurrentSessions {
  /// Runs 1, 4 and 16 sessions on both, `runs` times, and prints the medians.
  static func compare(modelPath: String, threads: Int, runs: Int) async throws {
    let perSession = 2048
    let local = LocalSystemModel(modelPath: modelPath, contextSize: perSession, threads: threads)
    try await local.prepare()
    let server = try await LlamaServerProcess(
      model: modelPath, parallel: 4, contextSize: 4 * perSession, threads: threads)
    defer { server.stop() }
    let served = OpenAICompatibleModel(
      name: "fleet-model", baseURL: server.baseURL, apiKey: nil,
      requestOptions: RequestOptions(timeout: .seconds(120), retryPolicy: .none), logHandler: .silent)
    for model in [local as any LanguageModel, served] {
      _ = try await aggregate(model: model, sessions: 4, tokens: 8, round: 0)  // warm-up
    }
    var rates: [Int: (ours: [Double], server: [Double])] = [:]
    for run in 1...runs {
      for count in [1, 4, 16] {
        let ours = try await aggregate(model: local, sessions: count, tokens: 64, round: run)
        let theirs = try await aggregate(model: served, sessions: count, tokens: 64, round: run)
        rates[count, default: ([], [])].ours.append(ours)
        rates[count, default: ([], [])].server.append(theirs)
      }
    }
    let one = median(rates[1]?.ours ?? [])
    print(
      "sessions answering at once on \(StreamedDecode.cpuModel), \(threads) threads, 64 greedy tokens each, "
        + "aggregate tokens/s, medians of \(runs) runs (llama-server -np 4 -c \(4 * perSession) -t \(threads)):")
    print(
      "| sessions | in-process t/s | llama-server -np 4 t/s | in-process / llama-server | in-process / one session |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for count in [1, 4, 16] {
      let ours = median(rates[count]?.ours ?? [])
      let theirs = median(rates[count]?.server ?? [])
      print(
        "| \(count) | \(format(ours)) | \(format(theirs)) | \(format(ours / theirs, 3)) | \(format(ours / one, 2))x |")
    }
    print("(runs, in-process: \(runsText(rates, \.ours)); llama-server: \(runsText(rates, \.server)))")
  }

  private static func runsText(
    _ rates: [Int: (ours: [Double], server: [Double])], _ side: KeyPath<(ours: [Double], server: [Double]), [Double]>
  ) -> String {
    [1, 4, 16].map { count in "\(count): \((rates[count]?[keyPath: side] ?? []).map { format($0) })" }
      .joined(separator: ", ")
  }

  /// Generated tokens per second, all sessions together. Each prompt starts
  /// with the round and the session's number, so that neither side reuses a
  /// cached prompt (llama-server would keep a slot's prompt from the last
  /// round; a new session here never sees another session's tokens).
  static func aggregate(model: any LanguageModel, sessions count: Int, tokens: Int, round: Int) async throws -> Double {
    let options = HybridGenerationOptions.hybrid(
      gemini: GenerationConfig(temperature: 0, maxOutputTokens: tokens),
      foundationModels: GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
    let sessions = (0..<count).map { _ in GenerativeModelSession(model: model, logHandler: .silent) }
    let start = ContinuousClock.now
    let generated = try await withThrowingTaskGroup(of: Int.self) { group in
      for (index, session) in sessions.enumerated() {
        group.addTask {
          let reply = try await session.respond(
            to: "Round \(round), story \(index) of \(count): tell me about a lighthouse keeper.", options: options)
          return reply.rawResponse.usageMetadata?.candidatesTokenCount ?? 0
        }
      }
      return try await group.reduce(0, +)
    }
    return Double(generated) / (ContinuousClock.now - start).seconds
  }
}
