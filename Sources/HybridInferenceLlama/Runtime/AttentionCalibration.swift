import CLlama
import HybridInferenceCore

/// How `FlashAttention.automatic` decides on the CPU backend: from the time
/// the loaded model's decode step takes with and without the fused kernel,
/// on this machine, at a few depths (`AttentionStepCalibration`), or for a
/// model too large to step quickly, the time its attention alone takes
/// (`AttentionCalibrationGraph`).
///
/// Why a measurement and not a rule: no rule on facts known at load is right
/// on both CPUs of one machine type. With SmolLM2 (heads 64 wide) llama-bench
/// decodes 2.3-2.7x faster with it off at 1,024 tokens on a 2-core Intel Xeon,
/// and 4-9% faster with it on on an AMD EPYC (Benchmarks/RESULTS.md §1d).
///
/// The decision (`decide(_:)`, pure, so that tests inject timings): each
/// (depth, setting) cell's time is the fastest of its repetitions (noise on
/// shared cores only ever adds time), each depth's pair is weighted by how
/// deep it is (`weight(ofDepth:)`: conversations go deep, and that is where the
/// two settings part), and the cheaper total wins unless the two are within
/// `tieMargin(wholeSteps:)`, where the measurement says nothing and `fallback` decides, so
/// that noise does not flip the answer from one process to the next.
enum AttentionCalibration {
  /// Relative difference under which the two settings count as even: 3% of
  /// attention alone (the graph), 2% of whole decode steps (`AttentionStepCalibration`:
  /// within 2% of a step either setting keeps the library within 0.95x of
  /// the faster one).
  static func tieMargin(wholeSteps: Bool) -> Double { wholeSteps ? 0.02 : 0.03 }
  /// The depths measured (tokens already in the cache), capped by the context.
  static let depths = [0, 256, 1024]

  /// One depth's timings, seconds per decode step (all layers).
  struct Cell: Sendable, Equatable, Codable {
    var depth: Int
    var off: [Double] = []
    var on: [Double] = []
  }

  /// What a calibration measured.
  struct Timings: Sendable, Equatable, Codable {
    /// The model's layers, and how many were timed (fewer when all would not fit
    /// `AttentionCalibrationGraph.maximumCacheBytes`; times are scaled up).
    var layers: Int
    var timedLayers: Int
    /// True for whole decode steps of the model (`AttentionStepCalibration`),
    /// false for attention alone (`AttentionCalibrationGraph`).
    var wholeSteps = false
    var cells: [Cell] = []
  }

  /// Why a measurement could not be made.
  struct Failure: Error, Equatable {
    var reason: String
  }

  /// The verdict: the setting and why, for the log.
  struct Verdict: Sendable, Equatable {
    /// True for the fused kernel; nil for a tie or a failed measurement (the caller's fallback decides).
    var flash: Bool?
    var reason: String
  }

  /// Deeper steps weigh more: 1 at depth 0, 2 at 256, 5 at 1,024.
  static func weight(ofDepth depth: Int) -> Double {
    1 + Double(max(0, depth)) / 256
  }

  /// The setting the timings favour, or nil (`flash`) when they are even or unusable.
  static func decide(_ timings: Timings) -> Verdict {
    var (on, off) = (0.0, 0.0)
    var parts: [String] = []
    for cell in timings.cells {
      guard let fastestOn = cell.on.filter({ $0.isFinite && $0 > 0 }).min(),
        let fastestOff = cell.off.filter({ $0.isFinite && $0 > 0 }).min()
      else { return Verdict(flash: nil, reason: "no usable timing at depth \(cell.depth)") }
      on += weight(ofDepth: cell.depth) * fastestOn
      off += weight(ofDepth: cell.depth) * fastestOff
      parts.append("depth \(cell.depth) \(milliseconds(fastestOn)) vs \(milliseconds(fastestOff))")
    }
    guard off > 0, on > 0 else { return Verdict(flash: nil, reason: "no timings") }
    let change = (on - off) / off
    let what = timings.wholeSteps ? "decode steps" : "attention"
    let summary = "\(what) measured on vs off: \(parts.joined(separator: ", ")) ms/token"
    let margin = tieMargin(wholeSteps: timings.wholeSteps)
    if abs(change) < margin {
      return Verdict(flash: nil, reason: "even within \(Int(margin * 100))% (\(percent(change))), \(summary)")
    }
    return Verdict(
      flash: change < 0, reason: "\(change < 0 ? "on" : "off") (\(percent(change)) with it on), \(summary)")
  }

  /// The depths a context of `contextSize` tokens can reach, from `depths`.
  static func depths(contextSize: Int) -> [Int] {
    let deepest = max(0, contextSize - 1)
    var result: [Int] = []
    for depth in depths.map({ min($0, deepest) }) where !result.contains(depth) { result.append(depth) }
    return result
  }

  private static func milliseconds(_ seconds: Double) -> String {
    let hundredths = Int((seconds * 100_000).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
  }

  private static func percent(_ change: Double) -> String {
    let tenths = Int((change * 1000).rounded())
    return "\(tenths < 0 ? "-" : "+")\(abs(tenths) / 10).\(abs(tenths) % 10)%"
  }
}
