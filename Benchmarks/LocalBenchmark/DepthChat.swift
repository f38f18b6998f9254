import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Ten turns of one conversation, 64 tokens decoded a turn, with flash
/// attention off, on and `.automatic` (a session on each model value): each turn's decode
/// beside llama-bench tg64 `-fa 0,1` at that turn's depth, right before it
/// (after the first repetition).
/// The chat runs `runs` times over (new sessions, the same turns), and each
/// turn's ratio is the median over those repetitions.
enum DepthChat {
  /// `fresh` makes the model values; with HI_CHAT_FRESH=1 every repetition
  /// gets new ones (a diagnosis: a context grown by one conversation stays
  /// that size for the next, and without flash attention its size costs).
  static func run(
    fresh: () async throws -> DepthBenchmark.Models, reference: DepthBenchmark.Reference, runs: Int
  ) async throws {
    var models = try await fresh()
    let renew = ProcessInfo.processInfo.environment["HI_CHAT_FRESH"] == "1"
    // `.automatic` first: it is the goal's figure, and it then follows
    // llama-bench's run by a second or less. HI_CHAT_SETTING=0, 1 or 2 (off,
    // on, `.automatic`): that model value's sessions alone (a diagnosis:
    // whether the contexts, used in turn, slow each other).
    let only = ProcessInfo.processInfo.environment["HI_CHAT_SETTING"].flatMap(Int.init)
    let order = only.map { [$0] } ?? [2, 0, 1]
    let filler = try await LocalThroughput.prompt(of: 100, model: models.off)
    var ratios = (
      off: [[Double]](repeating: [], count: 10), on: [[Double]](repeating: [], count: 10),
      automatic: [[Double]](repeating: [], count: 10)
    )
    var depths = [Int](repeating: 0, count: 10)
    // Per turn, each repetition's `.automatic` rate and llama-bench's two.
    var rates = (
      automatic: [[Double]](repeating: [], count: 10), benchOff: [[Double]](repeating: [], count: 10),
      benchOn: [[Double]](repeating: [], count: 10)
    )
    for repetition in 0..<runs {
      if renew, repetition > 0 { models = try await fresh() }
      let sessions = [models.off, models.on, models.automatic].map {
        GenerativeModelSession(model: $0, logHandler: .silent)
      }
      for turn in 0..<10 {
        let text = "Turn \(turn + 1). \(filler)\nTell me more about the Roman Empire."
        var ours = [Double.nan, .nan, .nan]
        func library() async throws {
          for flag in order {
            let sample = try await DepthBenchmark.streamed(
              text, model: models.model(flag), tokens: 64, session: sessions[flag])
            (ours[flag], depths[turn]) = (sample.rate, sample.depth)
          }
        }
        // The depth is known only once ours has run: the first repetition
        // runs ours first, every later one llama-bench first, whose last
        // test is `.automatic`'s setting, so that the pair whose ratio is the
        // goal ran within a second or two of each other (the machine's speed
        // moves by the minute on these shared cores).
        let oursFirst = repetition == 0 || depths[turn] == 0
        if oursFirst { try await library() }
        let bench = try reference.decode(
          depth: depths[turn], generate: 64, last: only.map { min($0, 1) } ?? models.decision.flag)
        if !oursFirst { try await library() }
        ratios.off[turn].append(ours[0] / bench.off)
        ratios.on[turn].append(ours[1] / bench.on)
        ratios.automatic[turn].append(ours[2] / max(bench.off, bench.on))
        rates.automatic[turn].append(ours[2])
        rates.benchOff[turn].append(bench.off)
        rates.benchOn[turn].append(bench.on)
      }
    }
    print(
      "10-turn chat, 64 tokens a turn, \(runs) repetitions; per turn: depth, library / llama-bench at the same "
        + "setting (off, on), .automatic / the faster of -fa 0 and -fa 1; medians over the repetitions")
    for turn in 0..<10 {
      print(
        "turn \(turn + 1): depth \(depths[turn]), off \(DepthBenchmark.summary(ratios.off[turn])), "
          + "on \(DepthBenchmark.summary(ratios.on[turn])), .automatic / faster "
          + DepthBenchmark.describeAgainstTheFaster(
            ours: rates.automatic[turn], benchOff: rates.benchOff[turn], benchOn: rates.benchOn[turn])
          + ", per-round max \(DepthBenchmark.summary(ratios.automatic[turn]))")
    }
    let faster = (0..<10).map { turn in
      median(
        DepthBenchmark.againstTheFaster(
          ours: rates.automatic[turn], benchOff: rates.benchOff[turn], benchOn: rates.benchOn[turn]
        ).ratios)
    }
    print(
      "chat .automatic / faster (the faster by the median of llama-bench's paired -fa 1 / -fa 0): lowest turn \(format(faster.min() ?? .nan, 3)), "
        + "median \(format(median(faster), 3)) (goal: every turn >= 0.95)")
    for (name, perTurn) in [("off", ratios.off), ("on", ratios.on), (".automatic / per-round max", ratios.automatic)] {
      let medians = perTurn.map(median)
      print(
        "chat \(name): lowest turn \(format(medians.min() ?? .nan, 3)), median \(format(median(medians), 3)) "
          + "(goal: every turn >= 0.95)")
    }
  }
}
