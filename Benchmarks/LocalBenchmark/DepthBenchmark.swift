import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Decode speed deep into a conversation (issue 22): the library's streamed
/// decode after prompts of 0, 256, 1,024 and 3,000 tokens, beside llama-bench
/// `-fa 0` and `-fa 1` at the same depth; a 10-turn chat whose every turn is
/// compared with llama-bench's faster setting at that turn's depth; and
/// prefill beside llama-bench pp512 with the setting the library chose.
/// Every figure of ours runs right beside its references, one repetition each,
/// so all see the same machine.
enum DepthBenchmark {
  static let depths = [0, 256, 1024, 3000]

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

  /// Streamed decode after `prompt` on a new session, from the first snapshot
  /// to the last; returns the rate and the prompt's tokens (the depth).
  static func streamed(
    _ prompt: String, model: LocalSystemModel, tokens: Int, session: GenerativeModelSession? = nil
  ) async throws -> (rate: Double, depth: Int, generated: Int) {
    let session = session ?? GenerativeModelSession(model: model, logHandler: .silent)
    var first: ContinuousClock.Instant?
    var (generated, depth) = (0, 0)
    for try await snapshot in session.streamResponse(to: prompt, options: options(tokens)) {
      if first == nil { first = .now }
      generated = snapshot.rawResponse.usageMetadata?.candidatesTokenCount ?? generated
      depth = snapshot.rawResponse.usageMetadata?.promptTokenCount ?? depth
    }
    guard let first, generated > 1 else { return (.nan, depth, generated) }
    return (Double(generated - 1) / (ContinuousClock.now - first).seconds, depth, generated)
  }

  static func run(modelPath: String, llamaBench: String, threads: Int, runs: Int) async throws {
    let decision = Decision()
    LocalSystemModel.setLlamaLogHandler(decision.handler)
    let model = LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads)
    try await model.prepare()
    LocalSystemModel.setLlamaLogHandler(.silent)
    print("library: \(decision.message); threads \(threads), greedy, 128 tokens per decode, \(runs) runs")
    _ = try await streamed("Hi", model: model, tokens: 8)  // warm-up
    func bench(depth: Int, generate: Int, fa: Int) throws -> Double {
      try LlamaBench.run(
        executable: llamaBench, model: modelPath, threads: threads, batchSize: 512, repetitions: 1, prompt: 0,
        generate: generate, depth: depth, flashAttention: fa
      ).decodeTokensPerSecond
    }
    print(
      "depth  tokens  library t/s  -fa 0 t/s  -fa 1 t/s  library / faster  (goal >= 0.95)  [library / llama-bench at its own setting]"
    )
    for depth in depths {
      var (ours, off, on) = ([Double](), [Double](), [Double]())
      var measured = 0
      for run in 0..<runs {
        let text = try await prompt(depth: depth, model: model, run: run)
        let sample = try await streamed(text, model: model, tokens: 128)
        measured = sample.depth
        ours.append(sample.rate)
        off.append(try bench(depth: measured, generate: 128, fa: 0))
        on.append(try bench(depth: measured, generate: 128, fa: 1))
      }
      let faster = max(median(off), median(on))
      print(
        "\(depth)".padding(toLength: 7, withPad: " ", startingAt: 0)
          + "\(measured)".padding(toLength: 8, withPad: " ", startingAt: 0)
          + format(median(ours)).padding(toLength: 13, withPad: " ", startingAt: 0)
          + format(median(off)).padding(toLength: 11, withPad: " ", startingAt: 0)
          + format(median(on)).padding(toLength: 11, withPad: " ", startingAt: 0)
          + format(median(ours) / faster, 3)
          + "  (-fa 1 / -fa 0 \(format(median(on) / median(off), 2)))  [\(format(median(ours) / (decision.flag == 1 ? median(on) : median(off)), 3))]"
      )
    }
    try await chat(model: model, flag: decision.flag, bench: bench)
    try await prefill(
      model: model, decision: decision, llamaBench: llamaBench, modelPath: modelPath,
      threads: threads, runs: runs)
  }

  /// Ten turns on one session, 64 tokens each: each turn's decode beside
  /// llama-bench's faster setting at that turn's depth.
  static func chat(model: LocalSystemModel, flag: Int, bench: (Int, Int, Int) throws -> Double) async throws {
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let filler = try await LocalThroughput.prompt(of: 100, model: model)
    print("10-turn chat, 64 tokens a turn: turn, depth, library t/s, llama-bench best of -fa 0/1 t/s, ratio")
    var (ratios, own) = ([Double](), [Double]())
    for turn in 1...10 {
      let text = "Turn \(turn). \(filler)\nTell me more about the Roman Empire."
      let sample = try await streamed(text, model: model, tokens: 64, session: session)
      let (off, on) = (try bench(sample.depth, 64, 0), try bench(sample.depth, 64, 1))
      let best = max(off, on)
      ratios.append(sample.rate / best)
      own.append(sample.rate / (flag == 1 ? on : off))
      print(
        "turn \(turn): depth \(sample.depth), \(format(sample.rate)) t/s (\(sample.generated) tokens), "
          + "llama-bench \(format(best)) t/s (-fa \(on > off ? 1 : 0)), ratio \(format(sample.rate / best, 3)); "
          + "-fa 0 \(format(off)), -fa 1 \(format(on)), vs -fa \(flag) \(format(own.last ?? .nan, 3))")
    }
    print(
      "chat: lowest turn ratio \(format(ratios.min() ?? .nan, 3)), median \(format(median(ratios), 3)) (goal: every turn >= 0.95); "
        + "vs llama-bench at the library's setting: lowest \(format(own.min() ?? .nan, 3)), median \(format(median(own), 3))"
    )
  }

  /// Prefill of a 512-token prompt beside llama-bench pp512 at the library's setting.
  static func prefill(
    model: LocalSystemModel, decision: Decision, llamaBench: String, modelPath: String, threads: Int, runs: Int
  ) async throws {
    let text = try await LocalThroughput.prompt(of: 512, model: model)
    var (ours, theirs) = ([Double](), [Double]())
    var tokens = 0
    for run in 0..<runs {
      let (rate, prefilled) = try await LocalThroughput.prefill(model: model, prompt: text, run: run + 100)
      (ours, tokens) = (ours + [rate], prefilled)
      theirs.append(
        try LlamaBench.run(
          executable: llamaBench, model: modelPath, threads: threads, batchSize: 512, repetitions: 1, prompt: 512,
          generate: 0, flashAttention: decision.flag
        ).prefillTokensPerSecond)
    }
    print(
      "prefill pp\(tokens): library \(format(median(ours))) t/s, llama-bench pp512 -fa \(decision.flag) \(format(median(theirs))) t/s, ratio \(format(median(ours) / median(theirs), 3)) (goal >= 0.95)"
    )
  }
}
