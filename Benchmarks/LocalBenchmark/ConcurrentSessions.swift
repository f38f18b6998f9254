import Foundation
import HybridInferenceCore
import HybridInferenceLlama
import OpenAIServers

/// Aggregate decode speed of several sessions answering at once (issues 14
/// and 22): total generated tokens over the wall time, on the in-process
/// model (one context, a sequence per session) and on llama-server `-np 4`
/// (continuous batching in one context) with the same file, the same
/// rendered prompts (the token ids our sessions prefill), the same answer
/// length, threads, window per sequence, batch sizes and flash attention.
/// The server is driven by a Python client (`scripts/llama-server-sessions.py`,
/// a thread and a keep-alive connection per session), so that no Swift HTTP
/// client is in its figure. Each repetition runs both, the order alternating,
/// and the table gives medians and the median of the per-pair ratios.
enum ConcurrentSessions {
  /// The session counts measured: `HYBRID_BENCH_SESSIONS` (comma-separated,
  /// e.g. "4" while profiling one case), else 1, 4 and 16.
  static let counts = BenchEnvironment.integers("HYBRID_BENCH_SESSIONS") ?? [1, 4, 16]
  static let perSequence = 2048
  static let answerTokens = 64

  /// One repetition's figures for one session count.
  struct Pair {
    var ours: Double
    var server: Double
    var ratio: Double { ours / server }
  }

  /// Runs 1, 4 and 16 sessions on both, `runs` times, and prints the table.
  /// `flashAttention` nil is the library's `.automatic`; the server gets
  /// whatever the library decided, explicitly.
  static func compare(modelPath: String, threads: Int, runs: Int, flashAttention: FlashAttention?) async throws {
    let decision = DepthBenchmark.Decision()
    LocalSystemModel.setLlamaLogHandler(decision.handler)
    // HI_MEMORY=mapped: the library on llama.cpp's default memory (`ModelMemory`).
    let memory: ModelMemory = ProcessInfo.processInfo.environment["HI_MEMORY"] == "mapped" ? .mapped : .automatic
    let local = LocalSystemModel(
      modelPath: modelPath, contextSize: perSequence, threads: threads, batchSize: 512,
      flashAttention: flashAttention ?? .automatic, memory: memory)
    try await local.prepare()
    LocalSystemModel.setLlamaLogHandler(.silent)
    let serverArguments = [
      "-fa", decision.flag == 1 ? "on" : "off", "-b", "512", "-ub", "512", "--threads-http", "32",
    ]
    let server = try await LlamaServerProcess(
      model: modelPath, parallel: 4, contextSize: 4 * perSequence, threads: threads,
      extraArguments: serverArguments)
    defer { server.stop() }
    let client = try ServerSessionsClient(port: server.port)
    // Warm-up: grows our context to four sequences, pages both in.
    _ = try await aggregate(local, sessions: 4, tokens: 8, round: 0)
    _ = try await client.aggregate(prompts: prompts(local, sessions: 4, round: 0), tokens: 8)
    var pairs: [Int: [Pair]] = [:]
    for run in 1...runs {
      for count in counts {
        let serverPrompts = try await prompts(local, sessions: count, round: run)
        var pair = Pair(ours: .nan, server: .nan)
        // Alternate who goes first, so a drift of the machine's speed
        // within a pair does not always favour the same side.
        for side in run.isMultiple(of: 2) ? [1, 0] : [0, 1] {
          if side == 0 {
            pair.ours = try await aggregate(local, sessions: count, tokens: answerTokens, round: run)
          } else {
            pair.server = try await client.aggregate(prompts: serverPrompts, tokens: answerTokens)
          }
        }
        pairs[count, default: []].append(pair)
      }
    }
    printTable(
      pairs, threads: threads, runs: runs, decision: decision, serverArguments: serverArguments, memory: memory)
  }

  private static func printTable(
    _ pairs: [Int: [Pair]], threads: Int, runs: Int, decision: DepthBenchmark.Decision, serverArguments: [String],
    memory: ModelMemory
  ) {
    let one = median((pairs[counts[0]] ?? []).map(\.ours))
    print(
      "sessions answering at once on \(StreamedDecode.cpuModel), \(threads) threads, \(answerTokens) greedy tokens each, "
        + "aggregate tokens/s (first request sent to last token), medians of \(runs) runs, the order alternating; "
        + "library: \(decision.message), \(perSequence) tokens per sequence, batch 512, memory .\(memory)")
    print(
      "server: \(LlamaServerProcess.binaryPath ?? "?") -np 4 -c \(4 * perSequence) -t \(threads) "
        + serverArguments.joined(separator: " ") + ", client: scripts/llama-server-sessions.py (POST /completion, "
        + "the library's prompt token ids, temperature 0, top_k 1, seed 42, cache_prompt)")
    print(
      "| sessions | in-process t/s | llama-server -np 4 t/s | in-process / llama-server (median of pairs) "
        + "| in-process / \(counts[0]) session(s) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for count in counts {
      let runs = pairs[count] ?? []
      let ours = median(runs.map(\.ours))
      print(
        "| \(count) | \(format(ours)) | \(format(median(runs.map(\.server)))) | "
          + "\(format(median(runs.map(\.ratio)), 3)) | \(format(ours / one, 2))x |")
    }
    for count in counts {
      let runs = pairs[count] ?? []
      print(
        "(\(count): in-process \(runs.map { format($0.ours) }), llama-server \(runs.map { format($0.server) }), "
          + "ratios \(runs.map { format($0.ratio, 3) }))")
    }
  }

  /// The text of session `index` of `count` in `round`. Each starts with the
  /// round and the session's number, so that neither side reuses a cached
  /// prompt beyond the template's opening (llama-server would keep a slot's
  /// prompt from the last round; a new session here never sees another
  /// session's tokens).
  static func text(index: Int, of count: Int, round: Int) -> String {
    "Round \(round), story \(index) of \(count): tell me about a lighthouse keeper."
  }

  /// The token ids our sessions prefill for `round`: what the server is sent.
  static func prompts(_ model: LocalSystemModel, sessions count: Int, round: Int) async throws -> [[Int32]] {
    var prompts: [[Int32]] = []
    for index in 0..<count {
      let transcript = Transcript(entries: [.prompt(Prompt(text(index: index, of: count, round: round)))])
      prompts.append(try await model.promptTokens(for: ModelRequest(transcript: transcript)))
    }
    return prompts
  }

  /// Generated tokens per second, all sessions together, from the first
  /// request to the last answer.
  static func aggregate(
    _ model: any LanguageModel, sessions count: Int, tokens: Int, round: Int
  ) async throws -> Double {
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
    let sessions = (0..<count).map { _ in GenerativeModelSession(model: model, logHandler: .silent) }
    let start = ContinuousClock.now
    let generated = try await withThrowingTaskGroup(of: Int.self) { group in
      for (index, session) in sessions.enumerated() {
        group.addTask {
          let reply = try await session.respond(to: text(index: index, of: count, round: round), options: options)
          return reply.rawResponse.usageMetadata?.candidatesTokenCount ?? 0
        }
      }
      return try await group.reduce(0, +)
    }
    return Double(generated) / (ContinuousClock.now - start).seconds
  }
}
