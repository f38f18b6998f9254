import CLlama
import Foundation
import HybridInferenceCore

/// What `FlashAttention` turns into for llama.cpp, and why (for the log).
///
/// - `.on` and `.off` are what they say, and never measure anything.
/// - `.automatic` on a GPU backend keeps llama.cpp's own choice
///   (`LLAMA_FLASH_ATTN_TYPE_AUTO`, on where the device supports it): the
///   calibration times the CPU backend only.
/// - `.automatic` on the CPU backend is calibrated: the model's decode step
///   is timed both ways on this machine at a few depths (`AttentionCalibration`,
///   a few tenths of a second, once per model file, llama.cpp build, CPU and
///   thread count: `AttentionCalibrationStore`).
///   When the two are even, or the measurement cannot be made (a shape ggml
///   refuses, an allocation that fails), the head-width rule decides
///   (`fallback(headSize:)`).
enum AttentionChoice {
  /// The narrowest attention head for which the fallback rule turns the fused
  /// kernel on: heads 64 wide can decode several times faster with it off a
  /// thousand tokens deep, heads 128 wide and more gain with it on
  /// (Benchmarks/RESULTS.md, "Attention at depth").
  static let minimumCPUHeadSize = 128

  /// What the decision is made from, injected so that tests can state them.
  struct Facts: Sendable, Equatable {
    /// Width of one attention head (GGUF `attention.key_length`, else
    /// embedding / heads); nil when the file does not say.
    var headSize: Int?
    /// Whether any of the model's layers are on a GPU (`OffloadDecision`).
    var offloadsToGPU: Bool
  }

  /// The setting given to llama.cpp and why, for the log.
  struct Decision: Sendable, Equatable {
    /// The setting a context starts with.
    var type: llama_flash_attn_type
    var reason: String
    /// The depth from which a context is made without the kernel instead
    /// (`AttentionCalibration.switchDepth`); nil when `type` serves every depth.
    var offFromDepth: Int? = nil

    /// The setting for a context whose deepest conversation is `depth` tokens
    /// deep where its next answer starts.
    func type(atDepth depth: Int) -> llama_flash_attn_type {
      guard let offFromDepth, depth >= offFromDepth else { return type }
      return LLAMA_FLASH_ATTN_TYPE_DISABLED
    }

    /// Every setting a context of this decision can be in: the start's, and off past the switch.
    var types: [llama_flash_attn_type] {
      offFromDepth == nil || type == LLAMA_FLASH_ATTN_TYPE_DISABLED ? [type] : [type, LLAMA_FLASH_ATTN_TYPE_DISABLED]
    }
  }

  /// The llama.cpp setting for `setting`; `calibrate` is called only for
  /// `.automatic` on the CPU backend.
  static func decide(
    _ setting: FlashAttention, facts: Facts, calibrate: () async -> AttentionCalibration.Verdict
  ) async -> Decision {
    switch setting {
    case .on: return Decision(type: LLAMA_FLASH_ATTN_TYPE_ENABLED, reason: "on (asked)")
    case .off: return Decision(type: LLAMA_FLASH_ATTN_TYPE_DISABLED, reason: "off (asked)")
    case .automatic: break
    }
    if facts.offloadsToGPU {
      return Decision(type: LLAMA_FLASH_ATTN_TYPE_AUTO, reason: "llama.cpp's choice (automatic, GPU backend)")
    }
    let verdict = await calibrate()
    guard let flash = verdict.flash else {
      let rule = fallback(headSize: facts.headSize)
      return Decision(type: rule.type, reason: "\(rule.reason) (automatic, calibration: \(verdict.reason))")
    }
    return Decision(
      type: flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED,
      reason: "\(verdict.reason) (automatic, calibrated)", offFromDepth: flash ? verdict.offFromDepth : nil)
  }

  /// The head-width rule, for a tie or a failed calibration: on for heads
  /// `minimumCPUHeadSize` wide or more, off for narrower or unknown ones.
  static func fallback(headSize: Int?) -> Decision {
    guard let head = headSize, head >= minimumCPUHeadSize else {
      let size = headSize.map { "\($0)" } ?? "unknown"
      return Decision(
        type: LLAMA_FLASH_ATTN_TYPE_DISABLED,
        reason: "off by the head-width rule (heads \(size) wide, under \(minimumCPUHeadSize))")
    }
    return Decision(
      type: LLAMA_FLASH_ATTN_TYPE_ENABLED,
      reason: "on by the head-width rule (heads \(head) wide, \(minimumCPUHeadSize) or more)")
  }

  /// The calibrated verdict for `model` run on `threads` threads with a
  /// window of `contextSize` tokens: remembered, stored in `directory`, or
  /// else measured on a compute lane once `threads` cores are free: whole
  /// decode steps (`AttentionStepCalibration`), or, for a model whose step
  /// is too slow or whose state cannot be repeated, its attention alone
  /// (`AttentionCalibrationGraph`).
  static func calibrated(
    model: LlamaModel, threads: Int, contextSize: Int, batchSize: Int, directory: URL?,
    pages: Bool = false
  ) async -> AttentionCalibration.Verdict {
    guard let shape = AttentionCalibrationGraph.Shape(model: model) else {
      return AttentionCalibration.Verdict(flash: nil, reason: "the model's attention shape cannot be measured")
    }
    let depths = AttentionCalibration.depths(contextSize: contextSize)
    let key = AttentionCalibrationStore.Key(
      model: model.fingerprint, shape: shape, threads: threads, depths: depths, pages: pages)
    return await AttentionCalibrationStore.shared.verdict(for: key, directory: directory) {
      // Timed on the lane: the cost is the calibration's, not the wait for the cores.
      let ran = try? await ComputeLane.run(threads: threads) {
        () -> (Result<AttentionCalibration.Timings, AttentionCalibration.Failure>, String?, Duration) in
        let start = ContinuousClock.now
        let steps = AttentionStepCalibration.measure(
          model: model, shape: shape, depths: depths, threads: threads, batchSize: batchSize, pages: pages)
        guard case .failure(let failure) = steps else { return (steps, nil, ContinuousClock.now - start) }
        // Only the graph needs the last-level cache's size (read from sysfs).
        let evict = AttentionCalibrationGraph.evictBytes(modelBytes: Int(clamping: llama_model_size(model.pointer)))
        let graph = AttentionCalibrationGraph.measure(shape: shape, depths: depths, threads: threads, evictBytes: evict)
        return (graph, failure.reason, ContinuousClock.now - start)
      }
      guard let (measured, stepFailure, elapsed) = ran else {
        return AttentionCalibration.Verdict(flash: nil, reason: "failed (\(LlamaThread.refused))", isTransient: true)
      }
      let cost = elapsed.components
      let milliseconds = cost.seconds * 1000 + cost.attoseconds / 1_000_000_000_000_000
      let instead = stepFailure.map { "; steps not timed: \($0)" } ?? ""
      switch measured {
      case .success(let timings):
        var verdict = AttentionCalibration.decide(timings)
        verdict.reason += "; calibrated in \(milliseconds) ms\(instead)"
        return verdict
      case .failure(let failure):
        return AttentionCalibration.Verdict(flash: nil, reason: "failed (\(failure.reason)\(instead))")
      }
    }
  }
}
