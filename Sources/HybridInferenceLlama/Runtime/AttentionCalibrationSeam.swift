import CLlama
import Foundation
import HybridInferenceCore

/// The calibration behind `FlashAttention.automatic`, as the benchmark
/// target checks it against llama-bench (`local-benchmark calibrate`;
/// Benchmarks/RESULTS.md, "Attention at depth"): one measurement of a model
/// file, and the rule's verdict on medians measured elsewhere. Not API: the
/// benchmark's access to internal types, kept to what it reads.
package enum AttentionCalibrationSeam {
  /// One depth: the median decode step (or attention alone) with the fused
  /// kernel and without, seconds.
  package struct Depth: Sendable {
    package var depth: Int
    package var on: Double
    package var off: Double

    /// A depth's medians.
    package init(depth: Int, on: Double, off: Double) {
      (self.depth, self.on, self.off) = (depth, on, off)
    }
  }

  /// What one calibration measured and decided.
  package struct Measurement: Sendable {
    /// The width of one attention head.
    package var headSize: Int
    /// The depths measured; a calibration may skip one the shallower ones settle.
    package var depths: [Depth]
    /// The fused kernel on or off; nil when even (the head-width rule decides).
    package var flash: Bool?
    /// The verdict as the log gives it.
    package var reason: String
    /// Wall time of the measurement, the model's load excluded, seconds.
    package var seconds: Double
  }

  /// The depths `.automatic` measures in a context of `contextSize` tokens.
  package static func depths(contextSize: Int) -> [Int] {
    AttentionCalibration.depths(contextSize: contextSize)
  }

  /// Loads `modelPath` and calibrates it at `depths` on `threads` threads
  /// (not remembered: every call measures): by whole decode steps, as
  /// `.automatic` does, or with `wholeSteps: false` by the attention graph,
  /// where `evicting: false` leaves the caches warm between computations (to
  /// show what eviction changes).
  package static func measure(
    modelPath: String, threads: Int, depths: [Int], wholeSteps: Bool = true, evicting: Bool = true
  ) async throws -> Measurement {
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
    return Measurement(
      headSize: shape.headSize,
      depths: timings.cells.map {
        Depth(depth: $0.depth, on: AttentionCalibration.median($0.on), off: AttentionCalibration.median($0.off))
      },
      flash: verdict.flash, reason: verdict.reason,
      seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
  }

  /// What `.automatic`'s rule for whole steps says of `depths` (medians
  /// measured elsewhere: llama-bench's, for the check), as the log says it.
  package static func verdict(ofWholeSteps depths: [Depth]) -> String {
    var timings = AttentionCalibration.Timings(layers: 1, timedLayers: 1, wholeSteps: true)
    timings.cells = depths.map { AttentionCalibration.Cell(depth: $0.depth, off: [$0.off], on: [$0.on]) }
    return AttentionCalibration.decide(timings).reason
  }
}
