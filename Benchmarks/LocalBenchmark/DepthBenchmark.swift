import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Decode speed deep into a conversation (issue 22): the library's streamed
/// decode after prompts of 0, 256, 1,024 and 3,000 tokens with flash attention
/// off and on (explicitly, two model values), beside llama-bench `-fa 0` and
/// `-fa 1` at the same depth; a 10-turn chat whose every turn is compared with
/// llama-bench at that turn's depth; and prefill beside llama-bench pp512.
///
/// Pairing: on these shared cores speed drifts by 10-25% from one minute to
/// the next, so every repetition is a round in which each figure of ours runs
/// right beside llama-bench's (one process, `-fa 0,1`, one repetition each),
/// ours first in even rounds and llama-bench first in odd ones. A round's
/// ratios are taken within the round; the table prints their median and
/// their spread (lowest-highest) over the rounds. "Faster" is per round: the
/// better of llama-bench's two settings in that round.
enum DepthBenchmark {
  /// `HI_DEPTHS` (comma-separated, e.g. "3000" to look at one row), else
  /// 0, 256, 1,024 and 3,000.
  static let depths = BenchEnvironment.integers("HI_DEPTHS") ?? [0, 256, 1024, 3000]

  /// The library's `.automatic` decision, read from its log line at load.
  /// Locked: the handler runs on the thread that makes the context.
  final class Decision: Sendable {
    private let line = Locked<String?>(nil)
    var handler: LogHandler {
      LogHandler { record in
        guard record.category == .local, record.message.hasPrefix("flash attention") else { return }
        self.line.withLock { $0 = record.message }
      }
    }
    var message: String { line.withLock { $0 } ?? "not logged" }
    /// llama-bench's `-fa` for the library's setting.
    var flag: Int { message.hasPrefix("flash attention on") ? 1 : 0 }
  }

  static func options(_ tokens: Int) -> HybridGenerationOptions {
    .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
  }

  /// A prompt of about `depth` tokens: numbered notes, then a request for a
  /// long answer. (A filler of one repeated word made SmolLM2 stop at once
  /// past a thousand tokens.)
  static func prompt(depth: Int, model: LocalSystemModel, run: Int) async throws -> String {
    let ask = "Write a long essay about the history of the Roman Empire. (\(run))"
    func notes(_ count: Int) -> String {
      (0..<count).map { "Note \($0 + 1): Rome grew along the Tiber and traded grain, wine and oil.\n" }.joined()
    }
    guard depth > 64 else { return ask }
    let perNote = max(1, try await model.countTokens(notes(10)) / 10)
    return "Read these notes.\n" + notes(max(1, (depth - 40) / perNote)) + "\n" + ask
  }

  /// Streamed decode after `prompt` on a new session (or `session`), from the
  /// first snapshot to the last; returns the rate, the prompt's tokens (the
  /// depth) and the tokens generated.
  static func streamed(
    _ prompt: String, model: LocalSystemModel, tokens: Int, session: GenerativeModelSession? = nil
  ) async throws -> (rate: Double, depth: Int, generated: Int) {
    let session = session ?? GenerativeModelSession(model: model, logHandler: .silent)
    var first: ContinuousClock.Instant?
    var (generated, depth) = (0, 0)
    for try await snapshot in session.streamResponse(to: prompt, options: options(tokens)) {
      if first == nil {
        first = .now
        PerfControl.enable()
      }
      generated = snapshot.rawResponse.usageMetadata?.candidatesTokenCount ?? generated
      depth = snapshot.rawResponse.usageMetadata?.promptTokenCount ?? depth
    }
    PerfControl.disable()
    guard let first, generated > 1 else { return (.nan, depth, generated) }
    // The first token comes from the prompt's logits; each later one from a
    // decode step: generated - 1 steps between the first snapshot and the last.
    return (Double(generated - 1) / (ContinuousClock.now - first).seconds, depth, generated)
  }

  /// The library with flash attention off, on and `.automatic`, and how `.automatic` decides.
  struct Models {
    let off: LocalSystemModel
    let on: LocalSystemModel
    /// Measured itself, not inferred from `off` and `on`: where the two
    /// settings cross it switches mid-conversation (`FlashAttention`).
    let automatic: LocalSystemModel
    let decision: Decision
    /// 0: off, 1: on, 2: `.automatic`.
    func model(_ flag: Int) -> LocalSystemModel { [off, on, automatic][flag] }
  }

  struct Reference {
    let llamaBench: String
    let modelPath: String
    let threads: Int

    /// llama-bench tg`generate` at `depth`, `-fa 0` and `-fa 1` in one
    /// process, `-fa last` second.
    func decode(depth: Int, generate: Int, last: Int = 1) throws -> (off: Double, on: Double) {
      let figures = try LlamaBench.runBoth(
        executable: llamaBench, model: modelPath, threads: threads, batchSize: 512, prompt: 0, generate: generate,
        depth: depth, last: last)
      return (figures.off.decodeTokensPerSecond, figures.on.decodeTokensPerSecond)
    }
  }

  /// The chat's repetitions: `HI_CHAT_RUNS`, else at least five. Each
  /// turn is one 64-token decode beside llama-bench's, and on these shared
  /// cores a turn's ratio moved 0.91-1.04 between repetitions: with three,
  /// one slow pair decided a turn's median (the lab log in Benchmarks/history/, "Attention at depth").
  static func chatRuns(_ runs: Int) -> Int {
    ProcessInfo.processInfo.environment["HI_CHAT_RUNS"].flatMap(Int.init).map { max(1, $0) } ?? max(runs, 5)
  }

  static func run(modelPath: String, llamaBench: String, threads: Int, runs: Int) async throws {
    let decision = Decision()
    LocalSystemModel.setLlamaLogHandler(decision.handler)
    try await LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads).prepare()
    LocalSystemModel.setLlamaLogHandler(.silent)
    // Each part on model values of its own, as an app starting that
    // conversation has: a model value's KV cache grows with its
    // conversations and stays grown (the table leaves 3,584 cells), where a
    // new chat starts at 512.
    func fresh() async throws -> Models {
      let models = Models(
        off: LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads, flashAttention: .off),
        on: LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads, flashAttention: .on),
        automatic: LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads),
        decision: decision)
      for model in [models.off, models.on, models.automatic] {
        try await model.prepare()
        _ = try await streamed("Hi", model: model, tokens: 8)  // warm-up
      }
      return models
    }
    let reference = Reference(llamaBench: llamaBench, modelPath: modelPath, threads: threads)
    print(
      "CPU: \(StreamedDecode.cpuModel); library .automatic: \(decision.message); threads \(threads), greedy, "
        + "streamed, 128 tokens per decode")
    let parts = ProcessInfo.processInfo.environment["HI_DEPTH_PARTS"] ?? "table,chat,prefill"
    if parts.contains("table") { try await table(models: try await fresh(), reference: reference, runs: runs) }
    if parts.contains("chat") { try await DepthChat.run(fresh: fresh, reference: reference, runs: chatRuns(runs)) }
    if parts.contains("prefill") { try await prefill(models: try await fresh(), reference: reference, runs: runs) }
  }

  /// The depth table: per depth, `rounds` rounds (twice `runs` where a round
  /// is cheap, up to 256 tokens deep), each the library off and on and
  /// llama-bench `-fa 0,1`.
  static func table(models: Models, reference: Reference, runs: Int) async throws {
    print(
      "depth  tokens  rounds  lib off  bench -fa 0  off ratio (spread)   lib on  bench -fa 1  on ratio (spread)    "
        + ".automatic (measured) / faster (spread)")
    print(
      "(faster: the llama-bench setting ahead by the median of the rounds' -fa 1 / -fa 0; \"per-round max\": against the "
        + "higher of each round's two, which noise biases upward)")
    for depth in depths {
      let rounds = depth <= 256 ? 2 * runs : runs
      var ratios = (off: [Double](), on: [Double](), automatic: [Double]())
      var rates = (
        off: [Double](), on: [Double](), automatic: [Double](), benchOff: [Double](), benchOn: [Double]()
      )
      // Round 0 runs ours first and measures the depth llama-bench is given.
      var measured = 0
      for round in 0..<rounds {
        var ours = [Double.nan, .nan, .nan]
        func library() async throws {
          for flag in [0, 1, 2] {
            let text = try await prompt(depth: depth, model: models.model(flag), run: round)
            let sample = try await streamed(text, model: models.model(flag), tokens: 128)
            (measured, ours[flag]) = (sample.depth, sample.rate)
          }
        }
        var bench = (off: Double.nan, on: Double.nan)
        if round.isMultiple(of: 2) {
          try await library()
          bench = try reference.decode(depth: measured, generate: 128)
        } else {
          bench = try reference.decode(depth: measured, generate: 128)
          try await library()
        }
        ratios.off.append(ours[0] / bench.off)
        ratios.on.append(ours[1] / bench.on)
        ratios.automatic.append(ours[2] / max(bench.off, bench.on))
        rates.automatic.append(ours[2])
        rates.off.append(ours[0])
        rates.on.append(ours[1])
        rates.benchOff.append(bench.off)
        rates.benchOn.append(bench.on)
      }
      print(
        column("\(depth)", 7) + column("\(measured)", 8) + column("\(rounds)", 8)
          + column(format(median(rates.off)), 9) + column(format(median(rates.benchOff)), 13)
          + column(summary(ratios.off), 21) + column(format(median(rates.on)), 8)
          + column(format(median(rates.benchOn)), 13) + column(summary(ratios.on), 21)
          + Self.describeAgainstTheFaster(ours: rates.automatic, benchOff: rates.benchOff, benchOn: rates.benchOn)
          + ", per-round max \(summary(ratios.automatic))")
    }
  }

  /// `.automatic`'s rate per round against llama-bench's faster setting in
  /// that round, summarised, with which setting that is. The faster setting
  /// is read over the rounds, not round by round: the higher of two noisy
  /// rates is biased upward by the noise (about half a round's spread when
  /// the settings tie, 4-5% on these cores), which made a tie read as the
  /// library falling short. It is the median of each round's -fa 1 / -fa 0
  /// (one llama-bench process ran both, seconds apart), not the two medians
  /// compared: a pair shares its minute of the machine, so the median of the
  /// pairs moves less with the minutes than either median does.
  static func againstTheFaster(ours: [Double], benchOff: [Double], benchOn: [Double]) -> (
    ratios: [Double], flag: Int
  ) {
    let flag = median(zip(benchOn, benchOff).map { $0 / $1 }) >= 1 ? 1 : 0
    return (zip(ours, flag == 1 ? benchOn : benchOff).map { $0 / $1 }, flag)
  }

  /// `againstTheFaster`, printed: the summary and the setting.
  static func describeAgainstTheFaster(ours: [Double], benchOff: [Double], benchOn: [Double]) -> String {
    let (ratios, flag) = againstTheFaster(ours: ours, benchOff: benchOff, benchOn: benchOn)
    return "\(summary(ratios)) (-fa \(flag) faster)"
  }

  /// Prefill of a prompt that fills 512 cells, off and on, beside
  /// llama-bench pp512 at the same setting, alternated per round.
  static func prefill(models: Models, reference: Reference, runs: Int) async throws {
    var ratios = (off: [Double](), on: [Double]())
    var tokens = 0
    let text = try await prompt(filling: 512, model: models.off)
    for round in 0..<(2 * runs) {
      var ours = (off: Double.nan, on: Double.nan)
      func library() async throws {
        for flag in [0, 1] {
          let (rate, prefilled, _) = try await LocalThroughput.prefill(
            model: models.model(flag), prompt: text, run: round + 100)
          (tokens, ours) = (prefilled, flag == 0 ? (rate, ours.on) : (ours.off, rate))
        }
      }
      if round.isMultiple(of: 2) { try await library() }
      let bench = try LlamaBench.runBoth(
        executable: reference.llamaBench, model: reference.modelPath, threads: reference.threads, batchSize: 512,
        prompt: 512, generate: 0)
      if !round.isMultiple(of: 2) { try await library() }
      ratios.off.append(ours.off / bench.off.prefillTokensPerSecond)
      ratios.on.append(ours.on / bench.on.prefillTokensPerSecond)
    }
    print(
      "prefill pp\(tokens) / llama-bench pp512, \(2 * runs) rounds: off \(summary(ratios.off)), on \(summary(ratios.on)) "
        + "(goal >= 0.95)")
  }

  /// A prefill prompt whose whole context (the template's system prompt,
  /// the round's prefix, the text) fills at most `cells` cells, as
  /// llama-bench's pp512 fills 512 from empty. Why not 512 tokens of text:
  /// llama.cpp attends over the used cells rounded up to 256, so a prompt a
  /// few cells past 512 attends over 768, and without flash attention every
  /// one costs (the fused kernel skips the masked ones). With 540 cells the
  /// library's prefill read 0.90-0.91 of pp512 -fa 0 and 0.90-0.96 with it
  /// on; with 512, 0.97-1.03 and 0.98-1.005, alternated in one half hour
  /// (the lab log in Benchmarks/history/, "Attention at depth").
  static func prompt(filling cells: Int, model: LocalSystemModel) async throws -> String {
    var words = cells
    while words > 0 {
      let text = try await LocalThroughput.prompt(of: words, model: model)
      // "run999 ": a prefix at least as long as any round's.
      let filled = try await LocalThroughput.prefill(model: model, prompt: text, run: 999).cells
      if filled <= cells - 2 { return text }
      words -= max(1, filled - cells + 2)
    }
    throw BenchmarkError("no prompt fills \(cells) cells or fewer")
  }

  /// "median (lowest-highest)" of per-round ratios.
  static func summary(_ ratios: [Double]) -> String {
    "\(format(median(ratios), 3)) (\(format(ratios.min() ?? .nan, 2))-\(format(ratios.max() ?? .nan, 2)))"
  }

  static func column(_ text: String, _ width: Int) -> String {
    text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0)
  }
}
