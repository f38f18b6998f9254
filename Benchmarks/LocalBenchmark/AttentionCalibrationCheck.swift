import Foundation
import HybridInferenceLlama

/// Checks the calibration behind `FlashAttention.automatic` against
/// llama-bench: the calibration's measured per-token difference (a whole
/// decode step with the fused kernel minus without, `AttentionStepCalibration`)
/// beside llama-bench's tg64 with `-fa 1` minus `-fa 0` at the same depths
/// (and the attention-only graph's prediction, `AttentionCalibrationGraph`,
/// the fallback for large models), and whether the verdicts agree
/// ("Attention at depth"): medians over `rounds`. Each round runs the calibration and llama-bench
/// back to back, so that both see the same load on the shared cores.
enum AttentionCalibrationCheck {
  /// The library's own depths (a window of 4,096 tokens holds them all).
  static let depths = AttentionCalibrationSeam.depths(contextSize: 4096)

  static func run(modelPaths: [String], llamaBench: String, threads: Int, rounds: Int) async throws {
    print(
      "| model | head | depth | calibration steps on / off ms | measured Δ ms/token | attention graph: predicted Δ | llama-bench fa 1 / fa 0 ms/token | llama-bench Δ ms/token |"
    )
    print("|---|---|---|---|---|---|---|---|")
    var verdicts: [String] = []
    for path in modelPaths {
      let name = URL(fileURLWithPath: path).lastPathComponent
      var probes: [AttentionCalibrationSeam.Measurement] = []
      var graphs: [AttentionCalibrationSeam.Measurement] = []
      var benches: [[Int: (on: Double, off: Double)]] = []
      for _ in 0..<max(1, rounds) {
        probes.append(try await AttentionCalibrationSeam.measure(modelPath: path, threads: threads, depths: depths))
        graphs.append(
          try await AttentionCalibrationSeam.measure(
            modelPath: path, threads: threads, depths: depths, wholeSteps: false))
        benches.append(try llamaBenchMilliseconds(executable: llamaBench, model: path, threads: threads))
      }
      var benchDepths: [AttentionCalibrationSeam.Depth] = []
      // A calibration may skip a depth the shallower ones settle: medians of the rounds that measured it.
      func at(_ depth: Int, _ figures: [AttentionCalibrationSeam.Measurement]) -> [AttentionCalibrationSeam.Depth] {
        figures.compactMap { $0.depths.first { $0.depth == depth } }
      }
      for depth in depths {
        let on = median(benches.map { $0[depth]?.on ?? .nan })
        let off = median(benches.map { $0[depth]?.off ?? .nan })
        let steps = at(depth, probes)
        let predictedOn = steps.isEmpty ? .nan : median(steps.map { $0.on * 1000 })
        let predictedOff = steps.isEmpty ? .nan : median(steps.map { $0.off * 1000 })
        let graph = at(depth, graphs)
        let graphChange = graph.isEmpty ? .nan : median(graph.map { ($0.on - $0.off) * 1000 })
        benchDepths.append(.init(depth: depth, on: on / 1000, off: off / 1000))
        print(
          "| \(name) | \(probes[0].headSize) | \(depth) | \(format(predictedOn, 2)) / \(format(predictedOff, 2)) | \(signed(predictedOn - predictedOff)) | \(signed(graphChange)) | \(format(on, 2)) / \(format(off, 2)) | \(signed(on - off)) |"
        )
      }
      // llama-bench's medians read by the library's own rule.
      let bench = AttentionCalibrationSeam.verdict(ofWholeSteps: benchDepths)
      let calls = probes.map(\.verdictWord)
      let graphCalls = graphs.map(\.verdictWord).joined(separator: ", ")
      let costs = probes.map { format($0.seconds * 1000) }.joined(separator: ", ")
      verdicts.append(
        "\(name): calibration \(calls.joined(separator: ", ")) in \(costs) ms (last: \(probes.last?.reason ?? "")); graph \(graphCalls); llama-bench by the same rule: \(bench.prefix { $0 != ")" }))"
      )
    }
    for line in verdicts { print(line) }
  }

  private static func signed(_ value: Double) -> String { (value >= 0 ? "+" : "") + format(value, 2) }

  /// llama-bench's tg64 at each depth, milliseconds per token (median of three), with it on and off.
  private static func llamaBenchMilliseconds(
    executable: String, model: String, threads: Int
  ) throws -> [Int: (on: Double, off: Double)] {
    let runs = try LlamaBench.runJSON(
      executable: executable,
      arguments: [
        "-m", model, "-p", "0", "-n", "64", "-t", "\(threads)", "-r", "3", "-fa", "0,1",
        "-d", depths.map(String.init).joined(separator: ","), "-o", "json",
      ])
    var result: [Int: (on: Double, off: Double)] = [:]
    for run in runs {
      guard let depth = run["n_depth"] as? Int, let samples = run["samples_ts"] as? [Double] else { continue }
      let milliseconds = 1000 / median(samples)
      let flash = (run["flash_attn"] as? Bool) ?? ((run["flash_attn"] as? Int) ?? 0 != 0)
      var entry = result[depth] ?? (.nan, .nan)
      if flash { entry.on = milliseconds } else { entry.off = milliseconds }
      result[depth] = entry
    }
    return result
  }
}

extension AttentionCalibrationSeam.Measurement {
  /// What `.automatic` would choose: "on", "off", or "even" (the head-width rule decides).
  fileprivate var verdictWord: String { flash.map { $0 ? "on" : "off" } ?? "even" }
}
