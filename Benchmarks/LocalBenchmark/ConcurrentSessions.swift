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

  /// One side's round: its aggregate speed, and how many prompt tokens it
  /// decoded (not taken from a cache), which must be the same on both sides
  /// for the speeds to compare.
  struct Round {
    var tokensPerSecond: Double
    var prefilled: Int
  }

  /// One repetition's figures for one session count.
  struct Pair {
    var ours = Round(tokensPerSecond: .nan, prefilled: 0)
    var server = Round(tokensPerSecond: .nan, prefilled: 0)
    var ratio: Double { ours.tokensPerSecond / server.tokensPerSecond }
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
    // `--cache-ram 0`: the server's prompt cache in RAM (on by default) would
    // restore a state saved from any earlier round's request, and decode
    // fewer prompt tokens than sessions that never share their words; the
    // table prints both sides' prompt tokens decoded to show they match.
    let serverArguments = [
      "-fa", decision.flag == 1 ? "on" : "off", "-b", "512", "-ub", "512", "--threads-http", "32", "--cache-ram", "0",
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
        var pair = Pair()
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
    let one = median((pairs[counts[0]] ?? []).map(\.ours.tokensPerSecond))
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
      let ours = median(runs.map(\.ours.tokensPerSecond))
      print(
        "| \(count) | \(format(ours)) | \(format(median(runs.map(\.server.tokensPerSecond)))) | "
          + "\(format(median(runs.map(\.ratio)), 3)) | \(format(ours / one, 2))x |")
    }
    for count in counts {
      let runs = pairs[count] ?? []
      print(
        "(\(count): in-process \(runs.map { format($0.ours.tokensPerSecond) }), "
          + "llama-server \(runs.map { format($0.server.tokensPerSecond) }), ratios \(runs.map { format($0.ratio, 3) }); "
          + "prompt tokens decoded per round: in-process \(Set(runs.map(\.ours.prefilled)).sorted()), "
          + "llama-server \(Set(runs.map(\.server.prefilled)).sorted()))")
    }
    let unequal = counts.filter { count in (pairs[count] ?? []).contains { $0.ours.prefilled != $0.server.prefilled } }
    if !unequal.isEmpty {
      print(
        "warning: at \(unequal) session(s) the two sides decoded different prompt tokens; "
          + "those ratios compare unequal work")
    }
  }

  /// The text of session `index` of `count` in `round`. Its first word
  /// (a single token in SmolLM2's vocabulary) differs from the first word
  /// of each of the 29 requests before it, so that neither side
  /// reuses a cached prompt beyond the template's opening. llama-server
  /// keeps each slot's last prompt and reuses whatever the next one shares
  /// with it, the user's words included; a new session here never sees
  /// another session's tokens. (With every text starting "Round ", the
  /// server decoded 22 prompt tokens a session against the library's 24.)
  static func text(index: Int, of count: Int, round: Int) -> String {
    let before = counts.prefix { $0 != count }.reduce(0, +)
    let request = round * counts.reduce(0, +) + before + index
    return "\(openingWords[request % openingWords.count]) story \(index) of \(count) (round \(round)) "
      + "about a lighthouse keeper."
  }

  /// Thirty words, each one token after a line break in SmolLM2's vocabulary.
  static let openingWords = [
    "Tell", "Write", "Give", "Share", "Describe", "Create", "Imagine", "Provide", "Spin", "Make",
    "Build", "Form", "Shape", "Bring", "Show", "Read", "Find", "Plan", "Explain", "Start",
    "Keep", "Open", "Send", "Add", "Take", "Let", "Sing", "Ask", "Note", "Pick",
  ]

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
  /// request to the last answer, and the prompt tokens they decoded.
  static func aggregate(
    _ model: any LanguageModel, sessions count: Int, tokens: Int, round: Int
  ) async throws -> Round {
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
    let sessions = (0..<count).map { _ in GenerativeModelSession(model: model, logHandler: .silent) }
    let start = ContinuousClock.now
    let usage = try await withThrowingTaskGroup(of: UsageMetadata?.self) { group in
      for (index, session) in sessions.enumerated() {
        group.addTask {
          let reply = try await session.respond(to: text(index: index, of: count, round: round), options: options)
          return reply.rawResponse.usageMetadata
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    let seconds = (ContinuousClock.now - start).seconds
    let generated = usage.reduce(0) { $0 + ($1?.candidatesTokenCount ?? 0) }
    let prefilled = usage.reduce(0) { $0 + ($1?.promptTokenCount ?? 0) - ($1?.cachedContentTokenCount ?? 0) }
    return Round(tokensPerSecond: Double(generated) / seconds, prefilled: prefilled)
  }
}
