import CLlama
import HybridInferenceCore

/// How `FlashAttention.automatic` decides on the CPU backend: from the time
/// the loaded model's decode step takes with and without the fused kernel,
/// on this machine, at a few depths (`AttentionStepCalibration`), or for a
/// model too large to step quickly, the time its attention alone takes
/// (`AttentionCalibrationGraph`).
///
/// Why a measurement and not a rule: no rule on facts known at load is right
/// on every CPU. The same model, a thousand tokens deep, can decode several
/// times faster with the kernel off on one CPU and a few percent faster with
/// it on on another of the same machine type (Benchmarks/RESULTS.md,
/// "Attention at depth").
///
/// The decision (`decide(_:)`, pure, so that tests inject timings): each
/// depth's difference is the median over its paired repetitions (noise on
/// shared cores drifts and stalls). For attention alone each depth is
/// weighted by how deep it is (`weight(ofDepth:)`: conversations go deep,
/// and that is where the two settings part), and the cheaper total wins
/// unless the two are within `tieMargin`, where `fallback` decides. For
/// whole steps llama.cpp's default (on) stands unless off is clearly faster
/// both in that total and at the worst depth (`wholeStepVerdict`), and
/// where the two clearly cross it is on below the crossing and off from it
/// (`switchDepth`).
enum AttentionCalibration {
  /// Relative difference under which attention alone (the graph,
  /// `AttentionCalibrationGraph`) counts as even: 3%. The head-width rule
  /// then decides. On shared cores one calibration's noise is about that large.
  static let tieMargin = 0.03
  /// Relative difference under which whole decode steps
  /// (`AttentionStepCalibration`) count as even: 5%, and llama.cpp's
  /// default (on) stands: off has to be clearly faster to win, in the
  /// weighted total and at the worst depth (`wholeStepVerdict`).
  ///
  /// Why 5% and not the graph's 3%: whole steps are noisier than attention
  /// alone, and for a model where the two settings are a near tie one
  /// calibration's reading swings by about 5% either way from one process
  /// to the next; a verdict that moves with the noise also moves the model's
  /// greedy answers. Keeping on within 5% costs at most the 5% that decode's
  /// goal allows, and where the choice matters the gap is far wider
  /// (Benchmarks/RESULTS.md, "Attention at depth").
  static let stepTieMargin = 0.05

  /// The depths measured (tokens already in the cache), capped by the context.
  ///
  /// Why 3,072: on some CPUs the two settings cross between 1,024 and 3,000
  /// tokens, and a calibration that stopped at 1,024 would read on ahead
  /// everywhere and keep it on for a chat's later turns, where off is faster
  /// (Benchmarks/RESULTS.md, "Attention at depth").
  static let depths = [0, 256, 1024, 3072]

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
    /// With `flash` true: the depth (tokens in the cache) from which a
    /// context is better made without the kernel (`switchDepth(_:)`); nil
    /// when one setting serves every depth.
    var offFromDepth: Int? = nil
    /// True when nothing was measured for a reason of the moment (the OS
    /// refused a compute thread): such a verdict is neither remembered nor
    /// stored, so the next load measures.
    var isTransient = false
  }

  /// Deeper steps weigh more: 1 at depth 0, 2 at 256, 5 at 1,024, 13 at 3,072.
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
  /// median ignores. (The fastest of each setting, compared, is one lucky
  /// repetition each, and flips a near tie from one calibration to the next.)
  ///
  /// Whole steps turn it off only when off wins on both readings
  /// (`wholeStepVerdict`); attention alone reads the weighted total.
  static func decide(_ timings: Timings) -> Verdict {
    var depths: [Depth] = []
    for cell in timings.cells {
      guard let depth = medians(cell) else {
        return Verdict(flash: nil, reason: "no usable timing at depth \(cell.depth)")
      }
      depths.append(depth)
    }
    let off = depths.reduce(0) { $0 + weight(ofDepth: $1.depth) * $1.off }
    guard off > 0, depths.allSatisfy({ $0.on > 0 }) else { return Verdict(flash: nil, reason: "no timings") }
    let change = depths.reduce(0) { $0 + weight(ofDepth: $1.depth) * ($1.on - $1.off) } / off
    let what = timings.wholeSteps ? "decode steps" : "attention"
    let parts = depths.map { "depth \($0.depth) \(milliseconds($0.on)) vs \(milliseconds($0.off))" }
    let summary =
      "\(what) measured on vs off (medians of paired repetitions): \(parts.joined(separator: ", ")) ms/token"
    if timings.wholeSteps { return wholeStepVerdict(change: change, depths: depths, summary: summary) }
    if abs(change) < tieMargin {
      return Verdict(flash: nil, reason: "even within \(Int(tieMargin * 100))% (\(percent(change))), \(summary)")
    }
    return Verdict(
      flash: change < 0, reason: "\(change < 0 ? "on" : "off") (\(percent(change)) with it on), \(summary)")
  }

  /// One depth's medians: seconds per step without the kernel, and with it.
  struct Depth: Equatable {
    var depth: Int
    var off: Double
    var on: Double
  }

  /// How far a setting falls behind the faster of the two at its worst
  /// depth, as a fraction of its own time (0 when it is never behind), and
  /// that depth.
  static func shortfall(_ depths: [Depth], flash: Bool) -> (fraction: Double, depth: Int) {
    var worst = (fraction: 0.0, depth: depths.first?.depth ?? 0)
    for depth in depths {
      let (mine, other) = flash ? (depth.on, depth.off) : (depth.off, depth.on)
      let fraction = mine > other ? 1 - other / mine : 0
      if fraction > worst.fraction { worst = (fraction, depth.depth) }
    }
    return worst
  }

  /// Whole steps: off replaces llama.cpp's default (on) only when it is
  /// clearly faster on both readings: the depth-weighted total (`change`,
  /// what a conversation pays in all) by more than `stepTieMargin`, and at
  /// the worst depth, where on's shortfall must pass off's by more than the
  /// margin (`shortfall(_:flash:)`; the goal reads every depth).
  ///
  /// Why both: where on is clearly faster shallow and a near tie deep, one
  /// noisy minute at the deep depths tips the depth-weighted total alone to
  /// off, and the process then decodes short conversations slower than
  /// llama-bench's best; the worst depth alone turns on one noisy median.
  /// Where the choice matters (off several times faster deep) both
  /// readings say off by far.
  static func wholeStepVerdict(change: Double, depths: [Depth], summary: String) -> Verdict {
    let on = shortfall(depths, flash: true)
    let off = shortfall(depths, flash: false)
    let worst =
      "on up to \(percent(on.fraction, signed: false)) behind at depth \(on.depth), "
      + "off up to \(percent(off.fraction, signed: false)) at \(off.depth)"
    if let depth = switchDepth(depths) {
      return Verdict(
        flash: true, reason: "on below depth \(depth), off from it (\(worst)), \(summary)", offFromDepth: depth)
    }
    if change >= stepTieMargin, on.fraction - off.fraction > stepTieMargin {
      return Verdict(flash: false, reason: "off (\(percent(change)) with it on; \(worst)), \(summary)")
    }
    if change <= -stepTieMargin || off.fraction - on.fraction > stepTieMargin {
      return Verdict(flash: true, reason: "on (\(percent(change)) with it on; \(worst)), \(summary)")
    }
    return Verdict(
      flash: true,
      reason:
        "on, llama.cpp's default: off not clearly faster (\(percent(change)) with it on; \(worst)), \(summary)")
  }

  /// The depth from which off is faster, when the two settings cross: on
  /// clearly slower (by more than `stepTieMargin`) at the deepest and every
  /// measured depth down to some depth, and clearly faster at some depth
  /// below those; the crossing is where the difference in time, linear
  /// between the last depth where on is not clearly slower and the next,
  /// reaches zero (that depth itself when off is already ahead there).
  ///
  /// A clear lead at any shallower depth, not only at 0: on can be a near
  /// tie at depth 0 by one calibration and clearly ahead at 256, then
  /// behind deeper. Where on leads nowhere clearly, off everywhere costs no
  /// short conversation anything and no context is made again
  /// (`wholeStepVerdict`).
  ///
  /// Why: where on is clearly faster shallow and clearly slower deep, one
  /// setting per context misses by as much at one end whichever it is
  /// (Benchmarks/RESULTS.md, "Attention at depth"). A context that starts on
  /// and is made again off once a conversation passes the crossing
  /// (`BatchedContext.fitWindow`) is within the interpolation's error of the
  /// faster at every depth. Where one end is within the margin (a near tie,
  /// the noise of one calibration), there is no crossing; where both are
  /// clear of it, the crossing itself still moves a little with the deep
  /// depths' noise.
  static func switchDepth(_ depths: [Depth]) -> Int? {
    func onClearlyBehind(_ depth: Depth) -> Bool { depth.on > 0 && 1 - depth.off / depth.on > stepTieMargin }
    func onClearlyAhead(_ depth: Depth) -> Bool { depth.off > 0 && 1 - depth.on / depth.off > stepTieMargin }
    guard var from = depths.indices.last, from > 0, onClearlyBehind(depths[from]) else { return nil }
    while from > 1, onClearlyBehind(depths[from - 1]) { from -= 1 }
    guard depths[..<from].contains(where: onClearlyAhead) else { return nil }
    let (shallow, deep) = (depths[from - 1], depths[from])
    let (before, after) = (shallow.on - shallow.off, deep.on - deep.off)
    guard before < 0, after > before else { return shallow.depth }
    let span = Double(deep.depth - shallow.depth) * -before / (after - before)
    return shallow.depth + Int(span.rounded())
  }

  /// Whether `cell`'s whole-step pairs leave its verdict open. For whole
  /// steps off can win only where on is `margin` slower than off at some
  /// depth (`wholeStepVerdict`; under that: on), so the deepest one is open
  /// while the median difference is within two standard errors of that
  /// point (`isNear`).
  static func isUnresolved(_ cell: Cell, margin: Double) -> Bool {
    isNear(cell, fraction: margin)
  }

  /// Whether `cell`'s pairs already say on which side of both `margin` and
  /// `-margin` its difference lies: what every reading of a depth asks (on
  /// clearly behind, clearly ahead, or within: `wholeStepVerdict`,
  /// `switchDepth`), so a depth that is settled needs no more pairs
  /// (`AttentionStepCalibration.wantsAnotherPair`).
  static func isSettled(_ cell: Cell, margin: Double) -> Bool {
    !isNear(cell, fraction: margin) && !isNear(cell, fraction: -margin)
  }

  /// Whether every one of `cell`'s pairs, two at least, has the same
  /// setting slower than the other by more than `fraction` of the other's
  /// time: then no reading of the depth can change (`isSettled`'s question
  /// answered by a wide gap instead of many pairs).
  ///
  /// Why two pairs suffice here and not for `isSettled`: one stalled step
  /// moves one pair; to fake a gap this wide both pairs must stall on the
  /// same setting, though they run in opposite orders. Where the settings lie
  /// that far apart, the deep pairs are the dearest of the calibration, and
  /// every pair past two would be spent on a verdict already known.
  static func isFarApart(_ cell: Cell, fraction: Double) -> Bool {
    let pairs = usablePairs(cell)
    guard pairs.count >= 2 else { return false }
    return pairs.allSatisfy { $0.on > $0.off * (1 + fraction) } || pairs.allSatisfy { $0.off > $0.on * (1 + fraction) }
  }

  /// Whether the depths measured so far (`cells`, shallowest first) fix the
  /// reading of every deeper one: on far behind at the deepest of them
  /// (`isFarApart`), and not clearly behind (within `margin`, or ahead) at a
  /// shallower one. A step's time grows about linearly with depth, so the
  /// gap that grew from there keeps growing: a deeper depth would read on
  /// further behind, and every reading of the verdict (`switchDepth`, on
  /// clearly behind from some depth down to the deepest; `wholeStepVerdict`)
  /// is already fixed by the ones measured.
  ///
  /// Only that way round: with on far *ahead* at the deepest measured, a
  /// deeper depth weighs more in the total (`weight(ofDepth:)`) than the
  /// shallower ones where on may be behind, and can turn the verdict, so it
  /// is measured.
  ///
  /// Why: where flash attention is already far behind at 1,024 tokens, the
  /// 3,072-deep steps are the dearest part of the calibration and can only
  /// say what 1,024 said. Where the two are near at 1,024 the deeper depth
  /// is measured.
  static func deeperDepthsFollow(_ cells: [Cell], farApart: Double, margin: Double) -> Bool {
    guard let deepest = cells.last, isFarApart(deepest, fraction: farApart),
      let medians = medians(deepest), medians.on > medians.off
    else { return false }
    return cells.dropLast().contains { cell in
      self.medians(cell).map { ($0.on - $0.off) / $0.off <= margin } ?? false
    }
  }

  /// `cell`'s pairs whose two times are usable (finite and positive).
  static func usablePairs(_ cell: Cell) -> [(on: Double, off: Double)] {
    zip(cell.on, cell.off).filter { $0.0.isFinite && $0.0 > 0 && $0.1.isFinite && $0.1 > 0 }.map {
      (on: $0.0, off: $0.1)
    }
  }

  /// `cell`'s reading: the median time off, and on as off plus the median
  /// paired difference (`decide(_:)`); nil without a usable pair.
  static func medians(_ cell: Cell) -> Depth? {
    let pairs = usablePairs(cell)
    guard !pairs.isEmpty else { return nil }
    let off = median(pairs.map(\.off))
    return Depth(depth: cell.depth, off: off, on: off + median(pairs.map { $0.on - $0.off }))
  }

  /// Whether the median of `cell`'s paired differences (on minus off) is
  /// within two standard errors (from the pairs' median absolute deviation)
  /// of `fraction` of its median time off; true under three pairs.
  static func isNear(_ cell: Cell, fraction: Double) -> Bool {
    let differences = zip(cell.on, cell.off).filter { $0.0.isFinite && $0.1.isFinite }.map { $0.0 - $0.1 }
    guard differences.count >= 3 else { return true }
    let middle = median(differences)
    let spread = 1.4826 * median(differences.map { abs($0 - middle) })
    let standardError = 1.2533 * spread / Double(differences.count).squareRoot()
    let off = median(cell.off.filter(\.isFinite))
    return abs(middle - fraction * off) < 2 * standardError
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

  private static func percent(_ change: Double, signed: Bool = true) -> String {
    let tenths = Int((change * 1000).rounded())
    return "\(signed ? (tenths < 0 ? "-" : "+") : "")\(abs(tenths) / 10).\(abs(tenths) % 10)%"
  }
}
