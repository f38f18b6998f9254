import CLlama
import Foundation
import HybridInferenceCore

/// For the benchmarks: the calibration behind `FlashAttention.automatic`, on
/// a model file, with its figures (the validation against llama-bench,
/// `local-benchmark calibrate`; Benchmarks/RESULTS.md, "Attention at depth").
package enum AttentionCalibrationProbe {
  /// The depths `.automatic` measures in a context of `contextSize` tokens.
  package static func depths(contextSize: Int) -> [Int] {
    AttentionCalibration.depths(contextSize: contextSize)
  }

  /// One depth: the median step (or attention) with and without the fused kernel, seconds.
  package struct Depth: Sendable {
    package var depth: Int
    package var on: Double
    package var off: Double

    package init(depth: Int, on: Double, off: Double) {
      (self.depth, self.on, self.off) = (depth, on, off)
    }
  }

  package struct Figures: Sendable {
    package var headSize: Int
    package var depths: [Depth]
    /// What `.automatic` would choose: "on", "off", or "even" (the rule decides).
    package var verdict: String
    package var reason: String
    /// Wall time of the measurement, seconds.
    package var cost: Double
  }

  /// Loads `modelPath` and calibrates it at `depths` on `threads` threads
  /// (not remembered: every call measures): by whole decode steps, as
  /// `.automatic` does, or with `wholeSteps: false` by the attention graph,
  /// where `evicting: false` leaves the caches warm between computations (to
  /// show what eviction changes).
  package static func run(
    modelPath: String, threads: Int, depths: [Int], wholeSteps: Bool = true, evicting: Bool = true
  ) async throws -> Figures {
    let model = try await LocalSystemModel(modelPath: modelPath, threads: threads).loadedModel(progress: nil)
    guard let shape = AttentionCalibrationGraph.Shape(model: model) else {
      throw HybridInferenceError.generationFailed("the model's attention shape cannot be measured")
    }
    let evict =
      evicting ? AttentionCalibrationGraph.evictBytes(modelBytes: Int(clamping: llama_model_size(model.pointer))) : 0
    let start = ContinuousClock.now
    let measured = try await ComputeLane.run(threads: threads) {
      wholeSteps
        ? AttentionStepCalibration.measure(
          model: model, shape: shape, depths: depths, threads: threads, batchSize: 512, pages: model.weightsInMemory)
        : AttentionCalibrationGraph.measure(shape: shape, depths: depths, threads: threads, evictBytes: evict)
    }
    let elapsed = ContinuousClock.now - start
    let timings: AttentionCalibration.Timings
    switch measured {
    case .success(let value): timings = value
    case .failure(let failure): throw HybridInferenceError.generationFailed(failure.reason)
    }
    let verdict = AttentionCalibration.decide(timings)
    return Figures(
      headSize: shape.headSize,
      depths: timings.cells.map {
        Depth(depth: $0.depth, on: AttentionCalibration.median($0.on), off: AttentionCalibration.median($0.off))
      },
      verdict: verdict.flash.map { $0 ? "on" : "off" } ?? "even", reason: verdict.reason,
      cost: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
  }

  /// What `.automatic`'s rule for whole steps says of `depths` (medians
  /// measured elsewhere: llama-bench's, for the check), as the log says it.
  package static func verdict(ofWholeSteps depths: [Depth]) -> String {
    var timings = AttentionCalibration.Timings(layers: 1, timedLayers: 1, wholeSteps: true)
    timings.cells = depths.map { AttentionCalibration.Cell(depth: $0.depth, off: [$0.off], on: [$0.on]) }
    return AttentionCalibration.decide(timings).reason
  }
}
