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
/// depth's difference is the median over its paired repetitions (noise on
/// shared cores drifts and stalls), each depth is weighted by how
/// deep it is (`weight(ofDepth:)`: conversations go deep, and that is where the
/// two settings part), and the cheaper total wins unless the two are within
/// their margin, where the measurement says nothing: for whole steps
/// (`stepTieMargin`) llama.cpp's default (on) stands, for the graph
/// (`tieMargin`) `fallback` decides.
enum AttentionCalibration {
  /// Relative difference under which attention alone (the graph,
  /// `AttentionCalibrationGraph`) counts as even: 3%. The head-width rule
  /// then decides. On these shared cores one calibration's noise is 1-3%.
  static let tieMargin = 0.03
  /// Relative difference under which whole decode steps
  /// (`AttentionStepCalibration`) count as even: 5%, and llama.cpp's
  /// default (on) stands: off has to be clearly faster to win.
  ///
  /// Why 5% and not the graph's 3%: SmolLM2 on an AMD EPYC is a near tie
  /// (llama-bench puts on 0-8% ahead by depth), one calibration measured it
  /// from -5.8% to +3.7% with it on in five processes, and the one that said
  /// off (+3.7%, from one depth-0 median of 8.0 ms on against 6.5 off)
  /// decoded 3-7% slower than the others. A verdict that moves with the
  /// noise also moves the model's greedy answers from one process to the
  /// next. Keeping on within 5% costs at most the 5% that decode's goal
  /// allows (on within 5% of off), and the Xeon's 2.5x is far outside it.
  static let stepTieMargin = 0.05

  /// The margin `decide(_:)` applies to `timings`.
  static func margin(wholeSteps: Bool) -> Double {
    wholeSteps ? stepTieMargin : tieMargin
  }
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
    /// True when nothing was measured for a reason of the moment (the OS
    /// refused a compute thread): such a verdict is neither remembered nor
    /// stored, so the next load measures.
    var isTransient = false
  }

  /// Deeper steps weigh more: 1 at depth 0, 2 at 256, 5 at 1,024.
  static func weight(ofDepth depth: Int) -> Double {
    1 + Double(max(0, depth)) / 256
  }

  /// The setting the timings favour, or nil (`flash`) when they are even or unusable.
  ///
  /// Repetitions are paired (the two settings alternate, so the i-th of each
  /// ran within milliseconds of each other): per depth, the median of the
  /// pairs' differences, over the median time without the kernel. A drift
  /// of the machine's speed (another tenant, a frequency change) moves both
  /// of a pair and cancels; a stall of one repetition is an outlier the
  /// median ignores. (The fastest of each setting, compared, flipped
  /// SmolLM2's verdict from one calibration to the next on these cores.)
  static func decide(_ timings: Timings) -> Verdict {
    var (difference, off) = (0.0, 0.0)
    var parts: [String] = []
    for cell in timings.cells {
      let pairs = zip(cell.on, cell.off).filter { $0.0.isFinite && $0.0 > 0 && $0.1.isFinite && $0.1 > 0 }
      guard !pairs.isEmpty else { return Verdict(flash: nil, reason: "no usable timing at depth \(cell.depth)") }
      let cellDifference = median(pairs.map { $0.0 - $0.1 })
      let cellOff = median(pairs.map(\.1))
      difference += weight(ofDepth: cell.depth) * cellDifference
      off += weight(ofDepth: cell.depth) * cellOff
      parts.append("depth \(cell.depth) \(milliseconds(cellOff + cellDifference)) vs \(milliseconds(cellOff))")
    }
    guard off > 0 else { return Verdict(flash: nil, reason: "no timings") }
    let change = difference / off
    let what = timings.wholeSteps ? "decode steps" : "attention"
    let summary =
      "\(what) measured on vs off (medians of paired repetitions): \(parts.joined(separator: ", ")) ms/token"
    let margin = margin(wholeSteps: timings.wholeSteps)
    if abs(change) < margin, timings.wholeSteps {
      // Whole steps this close: llama.cpp's own default for the CPU stands.
      return Verdict(
        flash: true,
        reason: "on, llama.cpp's default: even within \(Int(margin * 100))% (\(percent(change))), \(summary)")
    }
    if abs(change) < margin {
      return Verdict(flash: nil, reason: "even within \(Int(margin * 100))% (\(percent(change))), \(summary)")
    }
    return Verdict(
      flash: change < 0, reason: "\(change < 0 ? "on" : "off") (\(percent(change)) with it on), \(summary)")
  }

  /// Whether `cell`'s whole-step pairs leave its verdict open. For whole
  /// steps the verdict turns where on is `margin` slower than off (under
  /// that: on, faster or a tie that keeps llama.cpp's default), so it is open
  /// while the median difference is within two standard errors of that
  /// point (the error from the pairs' median absolute deviation).
  static func isUnresolved(_ cell: Cell, margin: Double) -> Bool {
    let differences = zip(cell.on, cell.off).filter { $0.0.isFinite && $0.1.isFinite }.map { $0.0 - $0.1 }
    guard differences.count >= 3 else { return true }
    let middle = median(differences)
    let spread = 1.4826 * median(differences.map { abs($0 - middle) })
    let standardError = 1.2533 * spread / Double(differences.count).squareRoot()
    let off = median(cell.off.filter(\.isFinite))
    return abs(middle - margin * off) < 2 * standardError
  }

  /// The middle value (the mean of the two middle ones for an even count); nil-free input.
  static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
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
