import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Where a streamed decode's time goes at one depth: the library's stream,
/// llama.cpp's C API in this process with the library's context settings and
/// greedy sampling, the same with llama-bench's settings and random tokens,
/// and llama-bench itself, one repetition of each per round, rotated so that
/// none always runs first. Each figure's ratio to llama-bench is taken per
/// round (the two ran in the same minute) and the median of those is printed.
///
///   local-benchmark probe <model.gguf> <llama-bench> <depth> <fa 0|1> [runs] [threads]
enum DecodeProbe {
  static func run(
    modelPath: String, llamaBench: String, depth: Int, flashAttention: Int, runs: Int, threads: Int
  ) async throws {
    let flash: FlashAttention = flashAttention == 1 ? .on : .off
    let model = LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads, flashAttention: flash)
    let mapped = LocalSystemModel(
      modelPath: modelPath, contextSize: 4096, threads: threads, flashAttention: flash, memory: .mapped)
    try await model.prepare()
    try await mapped.prepare()
    // The library's `memory:` line: what the first decode moved, in how long.
    LocalSystemModel.setLlamaLogHandler(
      LogHandler { record in if record.message.hasPrefix("memory:") { print(record.message) } })
    let text = try await DepthBenchmark.prompt(depth: depth, model: model, run: 0)
    let measured = try await DepthBenchmark.streamed(text, model: model, tokens: 8).depth  // warm-up
    LocalSystemModel.setLlamaLogHandler(.silent)
    _ = try await DepthBenchmark.streamed(text, model: mapped, tokens: 8)
    let library = try RawLlama(
      path: modelPath,
      setup: .init(
        contextSize: 4096, batchSize: 512, threads: threads, flashAttention: flashAttention, asLibrary: true))
    let bench = try RawLlama(
      path: modelPath,
      setup: .init(contextSize: measured + 128, batchSize: 512, threads: threads, flashAttention: flashAttention))
    _ = try await ComputeLane.run(threads: threads) { library.decode(tokens: 8) }
    _ = try await ComputeLane.run(threads: threads) { bench.decode(tokens: 8) }
    // llama-bench on 2 MiB pages: its weights read in (`-lm none`) and glibc's
    // malloc asking for transparent huge pages, what the library's default
    // `ModelMemory.automatic` does with MADV_COLLAPSE.
    let names = [
      "library stream", "library stream, memory .mapped", "C API, library's context, greedy",
      "C API, llama-bench's context", "llama-bench on 2 MiB pages (-lm none, glibc.malloc.hugetlb=1)", "llama-bench",
    ]
    // HI_PROBE_ROWS=0,1: those rows only (llama-bench's default always runs).
    let rows = BenchEnvironment.integers("HI_PROBE_ROWS").map { Set($0 + [names.count - 1]) }
    var figures = Array(repeating: [Double](), count: names.count)
    for round in 0..<runs {
      for offset in 0..<names.count {
        let which = (round + offset) % names.count
        if let rows, !rows.contains(which) { continue }
        let rate: Double
        switch which {
        case 0, 1:
          let prompt = try await DepthBenchmark.prompt(depth: depth, model: model, run: round + 1)
          rate = try await DepthBenchmark.streamed(prompt, model: which == 0 ? model : mapped, tokens: 128).rate
        case 2:
          rate = try await ComputeLane.run(threads: threads) {
            library.decode(tokens: 128, depth: measured, sampled: true)
          }
        case 3: rate = try await ComputeLane.run(threads: threads) { bench.decode(tokens: 128, depth: measured) }
        default:
          rate = try LlamaBench.run(
            executable: llamaBench, model: modelPath, threads: threads, batchSize: 512, repetitions: 1, prompt: 0,
            generate: 128, depth: measured, flashAttention: flashAttention, hugePages: which == 4
          ).decodeTokensPerSecond
        }
        figures[which].append(rate)
      }
    }
    print("probe: depth \(measured) tokens, -fa \(flashAttention), \(threads) threads, \(runs) rounds, 128 tokens")
    let reference = figures[names.count - 1]
    for (name, rates) in zip(names, figures) where !rates.isEmpty {
      let ratios = zip(rates, reference).map { $0 / $1 }
      print(
        "\(name): median \(format(median(rates))) t/s, / llama-bench per round: median \(format(median(ratios), 3)) "
          + "(\(format(ratios.min() ?? .nan, 3))-\(format(ratios.max() ?? .nan, 3)))")
    }
  }
}

extension DecodeProbe {
  /// llama.cpp's C API alone, in this process: contexts made llama-bench's
  /// way and the library's way, with and without greedy sampling, each filled
  /// to `depth` once and then decoding `tokens` at a time in rotation, so
  /// that every variant sees the same minute of the machine.
  static func contexts(
    modelPath: String, depth: Int, flashAttention: Int, runs: Int, threads: Int, tokens: Int, only: Int? = nil
  ) async throws {
    /// The library's settings at the depth and 128 tokens of answer, plus
    /// `extra` cells, rounded up to 256.
    func sized(extra: Int) -> RawLlama.Setup {
      .init(
        contextSize: (depth + 128 + extra + 255) / 256 * 256, batchSize: 512, threads: threads,
        flashAttention: flashAttention, asLibrary: true)
    }
    var setups: [(String, RawLlama.Setup, Bool)] = [
      (
        "llama-bench's context, random tokens",
        .init(contextSize: depth + 128, batchSize: 512, threads: threads, flashAttention: flashAttention), false
      ),
      (
        "llama-bench's context, greedy",
        .init(contextSize: depth + 128, batchSize: 512, threads: threads, flashAttention: flashAttention), true
      ),
      (
        "n_ctx 4096 otherwise default, random",
        .init(contextSize: 4096, batchSize: 512, threads: threads, flashAttention: flashAttention), false
      ),
      (
        "library's context, random",
        .init(contextSize: 4096, batchSize: 512, threads: threads, flashAttention: flashAttention, asLibrary: true),
        false
      ),
      (
        "library's context, greedy",
        .init(contextSize: 4096, batchSize: 512, threads: threads, flashAttention: flashAttention, asLibrary: true),
        true
      ),
      // The cells WindowGrowth gives a sequence at this depth with 128 tokens of answer.
      ("library's context at WindowGrowth's size, greedy", sized(extra: 0), true),
      // WindowGrowth's size plus 128 cells of headroom (the lab log in Benchmarks/history/, "Attention at depth").
      ("library's context with 128 cells of headroom, greedy", sized(extra: 128), true),
    ]
    if let only { setups = [setups[only]] }
    llama_log_set({ _, _, _ in }, nil)  // no library here to route llama.cpp's log
    let raws = try setups.map { try RawLlama(path: modelPath, setup: $0.1) }
    for raw in raws { try await ComputeLane.run(threads: threads) { raw.fill(depth: depth) } }
    var figures = Array(repeating: [Double](), count: raws.count)
    for round in 0..<runs {
      for offset in 0..<raws.count {
        let which = (round + offset) % raws.count
        let (raw, sampled) = (raws[which], setups[which].2)
        figures[which].append(
          try await ComputeLane.run(threads: threads) { raw.decodeAtDepth(tokens: tokens, sampled: sampled) })
      }
    }
    print(
      "C API contexts: depth \(depth), -fa \(flashAttention), \(threads) threads, \(runs) rounds of \(tokens) tokens")
    for (setup, rates) in zip(setups, figures) {
      let ratios = zip(rates, figures[0]).map { $0 / $1 }
      print(
        "\(setup.0): median \(format(median(rates))) t/s, / the first per round: median \(format(median(ratios), 3)) "
          + "(\(format(ratios.min() ?? .nan, 3))-\(format(ratios.max() ?? .nan, 3)))")
    }
  }
}

extension DecodeProbe {
  /// The library's streamed decode alone, `runs` times at one depth: what
  /// `perf record` / `perf stat` attach to.
  static func libraryOnly(modelPath: String, depth: Int, flashAttention: Int, runs: Int, threads: Int) async throws {
    let model = LocalSystemModel(
      modelPath: modelPath, contextSize: 4096, threads: threads, flashAttention: flashAttention == 1 ? .on : .off)
    try await model.prepare()
    var rates: [Double] = []
    var measured = 0
    for run in 0..<runs {
      let prompt = try await DepthBenchmark.prompt(depth: depth, model: model, run: run)
      let sample = try await DepthBenchmark.streamed(prompt, model: model, tokens: 128)
      (measured, rates) = (sample.depth, rates + [sample.rate])
    }
    print("library stream: depth \(measured), -fa \(flashAttention): \(rates.map { format($0) }) t/s")
  }
}
