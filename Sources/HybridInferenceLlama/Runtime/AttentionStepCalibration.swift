import CLlama
import Foundation
import HybridInferenceCore

/// Times real decode steps of a loaded model with and without flash
/// attention, at a few depths, on the context's thread count: the first
/// measurement behind `FlashAttention.automatic` on the CPU backend
/// (`AttentionChoice.calibrated`).
///
/// Why whole steps: the attention-only graph (`AttentionCalibrationGraph`)
/// agrees with llama-bench on 1 thread but can disagree on 2, calling the
/// fused kernel dearer where the whole step is faster with it
/// (Benchmarks/RESULTS.md, "Attention at depth"). A step of the real model on
/// a real context is what a conversation pays, with the weights evicting K/V
/// and the threads' split as they are.
///
/// Why no prefill: the depth is loaded, not decoded. One token is decoded at
/// position 0, its sequence state is read, and a state of `depth` copies of
/// that cell is loaded back (`SequenceStateLayout.repeated`; a shallower
/// depth after a deeper one is that state cut short): a few milliseconds,
/// where a thousand tokens of prefill would cost a small model's whole time
/// budget on 2 cores. The K/V values are real ones (the copied cell's), and
/// the time of a step does not depend on them.
///
/// Bounded: two contexts of `cells(forDeepest:)` cells (not the window),
/// refused when their K/V would pass `maximumCacheBytes`; a model
/// whose step takes more than `maximumStepSeconds` with either setting
/// (`isTooSlowToTime`) is not timed this way (the
/// graph, whose cost does not grow with the weights, measures instead); no
/// depth gets a repetition past `minimumRepetitions` once `timeBudget` is
/// spent, a depth whose pairs settle it stops at `settledRepetitions` (two
/// pairs far apart: `farApartFraction`), and the deepest is skipped where
/// the shallower depths fix its reading.
enum AttentionStepCalibration {
  /// The most K/V bytes of one calibration context: 128 MiB.
  static let maximumCacheBytes = 128 << 20
  /// Cells of room past the deepest depth: 256, an answer's worth.
  static let answerRoom = 256

  /// The cells of the calibration's contexts: what the library gives a
  /// conversation that deep with an answer of up to `answerRoom` tokens to
  /// come (`BatchedContext.cells(toHold:window:)`, `WindowGrowth`'s rule:
  /// the deepest depth, the new token and the room, padded to 256; 3,584 for
  /// 3,072 tokens).
  ///
  /// Why not just the depth plus the room: without flash attention V is kept
  /// transposed, in rows as long as the context, and the off path's speed at
  /// depth moves with that length. A context of one lucky length can read off
  /// clearly faster where the contexts the library really makes read on
  /// ahead (Benchmarks/RESULTS.md, "Attention at depth"), so the calibration
  /// times the length a conversation gets.
  static func cells(forDeepest depth: Int) -> Int {
    guard depth >= 0, depth < 1 << 40 else { return Int.max }
    return BatchedContext.cells(toHold: depth + 1 + answerRoom, window: .max)
  }
  /// The slowest first step timed further: 60 ms, several times a small
  /// model's step on 2 cores at 1,024 tokens; a model of several billion
  /// weights takes hundreds, and its whole calibration would take seconds.
  /// Read on the faster setting (`isTooSlowToTime`).
  static let maximumStepSeconds = 0.06

  /// Whether a model's steps are too slow to time, from its first step with
  /// each setting at a depth: when the faster of the two takes over
  /// `slowestStep`. Read at every depth `measure` reaches, so a model too
  /// slow only at the deepest is found after the shallower depths are timed
  /// (`order(of:)`: about a second of steps for a model near the limit).
  ///
  /// Why the faster: a model's weights slow both settings alike, while one
  /// setting's attention far behind the other is what the calibration is
  /// there to catch. A small model whose flash-attention step is several
  /// times slower deep would read as "too slow" on the slower setting, and
  /// the attention graph would decide instead: off at every depth, where on
  /// can be faster for short conversations (Benchmarks/RESULTS.md,
  /// "Attention at depth").
  static func isTooSlowToTime(firstSteps: (on: Double, off: Double), slowestStep: Double) -> Bool {
    min(firstSteps.on, firstSteps.off) > slowestStep
  }
  /// Timed repetitions of a (depth, setting) cell after one warm-up, while
  /// its pairs leave it open and the time budget lasts:
  /// `minimumRepetitions` per unit of the depth's weight
  /// (`AttentionCalibration.weight(ofDepth:)`), at most 15, so 5 at depth 0,
  /// 10 at 256 and 15 at 1,024 and 3,072 (`wantsAnotherPair`); a depth
  /// measured before the deepest (`order(of:)`: 0 and 1,024) plans only its
  /// minimum, leaving the budget to the deepest. The deep depths get the
  /// most because a near tie there is as small as one step's noise on
  /// shared cores (about ±5%).
  static func repetitions(atDepth depth: Int) -> Int {
    min(15, Int((Double(minimumRepetitions) * AttentionCalibration.weight(ofDepth: depth)).rounded()))
  }
  /// The most repetitions at the deepest depth while its pairs leave the
  /// verdict open (`AttentionCalibration.isUnresolved`): 30.
  static let maximumRepetitions = 30
  /// Seconds from the calibration's start (its contexts included) after
  /// which no depth gets a pair past `minimumRepetitions`: 0.5.
  ///
  /// Why 0.5: the goal is a calibration well under a second at a model's
  /// first load. Its fixed part (two contexts of 3,584 cells, the 1,024- and
  /// 3,072-cell states loaded into both) and five pairs at each depth take
  /// most of a second for a small model on 2 cores (Benchmarks/RESULTS.md,
  /// "Attention at depth"); the budget leaves the near ties some pairs more.
  static let timeBudget = 0.5
  /// The timed repetitions every depth gets, past the time budget, unless
  /// `settledRepetitions` settle it sooner; the unit of
  /// `repetitions(atDepth:)`: 5.
  ///
  /// Why not fewer for an open depth: the deepest depth gets the budget
  /// before the depths measured after it (`order(of:)`), and on a slow or
  /// busy host spends it all. With two pairs left to a shallow depth, one
  /// stalled step decides its median, and depth 0 weighs in the worst-depth
  /// reading (`wholeStepVerdict`) as much as 1,024.
  static let minimumRepetitions = 5
  /// The fewest repetitions after which a depth whose pairs already settle
  /// every reading of it (`AttentionCalibration.isSettled`) stops: 3, whose
  /// median one stalled step does not move.
  ///
  /// Why stop early: where the settings are twice apart, three pairs show it
  /// as well as fifteen; the repetitions are for the near ties.
  static let settledRepetitions = 3
  /// How far apart every pair of a depth must put the settings for two
  /// pairs to settle it (`AttentionCalibration.isFarApart`): 20%, four
  /// times the tie margin.
  static let farApartFraction = 0.2

  /// Whether a depth whose pairs so far are `cell` gets another, `elapsed`
  /// seconds into the calibration: not once two pairs put the settings far
  /// apart (`farApartFraction`) or `settledRepetitions` settle it;
  /// yes under `minimumRepetitions`; past `budget`, no; else up to `planned`
  /// (`repetitions(atDepth:)`), and at the `deciding` (deepest) depth, while
  /// its pairs cannot yet tell the settings apart from a tie, up to
  /// `maximumRepetitions`. Pure, so that tests state the timings.
  static func wantsAnotherPair(
    _ cell: AttentionCalibration.Cell, planned: Int, deciding: Bool, elapsed: Double, budget: Double
  ) -> Bool {
    let pairs = min(cell.on.count, cell.off.count)
    let margin = AttentionCalibration.stepTieMargin
    if AttentionCalibration.isFarApart(cell, fraction: farApartFraction) { return false }
    if pairs >= settledRepetitions, AttentionCalibration.isSettled(cell, margin: margin) { return false }
    if pairs < minimumRepetitions { return true }
    if elapsed > budget { return false }
    if pairs < planned { return true }
    return deciding && pairs < maximumRepetitions && AttentionCalibration.isUnresolved(cell, margin: margin)
  }

  /// The order the depths are measured in: the shallowest, the one below
  /// the deepest, the deepest, then the rest from deep to shallow. Why:
  /// the first two can make the deepest unnecessary
  /// (`AttentionCalibration.deeperDepthsFollow`), and the deepest, which
  /// decides, runs before the depths that only place a crossing and share
  /// the time budget with it; those are its state cut short, where a
  /// deeper depth means loading a state again.
  static func order(of depths: [Int]) -> [Int] {
    let sorted = depths.sorted()
    guard sorted.count > 3 else { return sorted }
    let (shallowest, deep) = (sorted[0], Array(sorted.suffix(2)))
    return [shallowest] + deep + sorted.dropFirst().dropLast(2).reversed()
  }

  /// Times `model`'s decode step at each of `depths`, both ways, in
  /// `order(of:)`; the calling thread must be a compute lane (`ComputeLanes`).
  /// The timings hold the depths measured: a deeper one whose reading the
  /// shallower ones already fix is skipped (`AttentionCalibration.
  /// deeperDepthsFollow`). A failure when the faster setting's first step at
  /// some depth takes over `slowestStep` seconds (`isTooSlowToTime`); how
  /// many repetitions each depth gets: `wantsAnotherPair` (tests lower both limits).
  static func measure(
    model: LlamaModel, shape: AttentionCalibrationGraph.Shape, depths: [Int], threads: Int, batchSize: Int,
    pages: Bool = false, slowestStep: Double = maximumStepSeconds, budget: Double = timeBudget
  ) -> Result<AttentionCalibration.Timings, AttentionCalibration.Failure> {
    guard let deepest = depths.max(), depths.allSatisfy({ $0 >= 0 && $0 < 1 << 20 }) else {
      return .failure(.init(reason: "no depth to measure"))
    }
    let cells = cells(forDeepest: deepest)
    let rowBytes = ggml_row_size(shape.kvType, Int64(shape.headSize * shape.kvHeads))
    let (layerBytes, overflow) = (2 * rowBytes).multipliedReportingOverflow(by: cells)
    let (cacheBytes, overflowed) = layerBytes.multipliedReportingOverflow(by: shape.layers)
    guard !overflow, !overflowed, cacheBytes <= maximumCacheBytes else {
      return .failure(
        .init(reason: "a context of \(cells) cells would hold over \(maximumCacheBytes >> 20) MiB of K/V"))
    }
    // ggml work like a load or a generation: an exit waits for it (ExitDuringWorkTests).
    LlamaBackend.inFlight.enter()
    defer { LlamaBackend.inFlight.leave() }
    var steps = Steps(model: model, threads: threads, cells: cells, batchSize: min(batchSize, cells), pages: pages)
    defer { steps.free() }
    let start = DispatchTime.now().uptimeNanoseconds
    do throws(AttentionCalibration.Failure) {
      try steps.makeContexts()
      var measured: [AttentionCalibration.Cell] = []  // shallowest first while depths ascend
      let ordered = order(of: depths)
      let deepestAt = ordered.firstIndex(of: deepest) ?? 0
      for (done, depth) in ordered.enumerated() {
        let deciding = depth == deepest
        if deciding,
          AttentionCalibration.deeperDepthsFollow(
            measured.sorted { $0.depth < $1.depth }, farApart: farApartFraction,
            margin: AttentionCalibration.stepTieMargin)
        {
          continue
        }
        try steps.reach(depth)
        var cell = AttentionCalibration.Cell(depth: depth)
        // The deepest decides; a depth measured before it keeps to its minimum, leaving it the budget.
        let planned = done >= deepestAt ? repetitions(atDepth: depth) : minimumRepetitions
        var firstSteps = (on: 0.0, off: 0.0)
        var round = 0  // round 0 warms the depth up (a new graph, the cut cache) and is not kept
        while round == 0
          || wantsAnotherPair(
            cell, planned: planned, deciding: deciding,
            elapsed: Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9 - steps.movingSeconds,
            budget: budget)
        {
          defer { round += 1 }
          // Alternating which goes first, so a slow moment does not always fall on one setting.
          for flash in (round + done).isMultiple(of: 2) ? [false, true] : [true, false] {
            let seconds = try steps.step(flash: flash, at: depth)
            guard round > 0 else {
              if flash { firstSteps.on = seconds } else { firstSteps.off = seconds }
              continue
            }
            if flash { cell.on.append(seconds) } else { cell.off.append(seconds) }
          }
          if round == 0, isTooSlowToTime(firstSteps: firstSteps, slowestStep: slowestStep) {
            let faster = min(firstSteps.on, firstSteps.off)
            throw .init(reason: "a decode step takes \(Int(faster * 1000)) ms with either setting at depth \(depth)")
          }
        }
        measured.append(cell)
      }
      var result = AttentionCalibration.Timings(layers: shape.layers, timedLayers: shape.layers, wholeSteps: true)
      result.cells = depths.compactMap { depth in measured.first { $0.depth == depth } }
      return .success(result)
    } catch {
      return .failure(error)
    }
  }

  /// The two contexts (without flash attention, then with it) and a batch of one token.
  private struct Steps {
    let model: LlamaModel
    let threads: Int
    let cells: Int
    let batchSize: Int
    var contexts: [OpaquePointer] = []
    /// Per context, the weights moved to 2 MiB pages as the library's own
    /// contexts move them (`HugePageMove`); each outlives its context.
    let pages: [HugePageMove]
    /// Seconds the first steps spent moving the weights to 2 MiB pages,
    /// which the time budget does not count.
    var movingSeconds = 0.0
    /// Per context, the state of one decoded cell.
    var oneCell: [[UInt8]] = []
    /// The cells sequence 0 holds in both contexts.
    var filled = 0
    /// The last state loaded, its buffer reused for the next (in place where the size allows).
    var deep: [UInt8] = []
    var batch = llama_batch_init(1, 0, 1)
    let token: llama_token

    init(model: LlamaModel, threads: Int, cells: Int, batchSize: Int, pages: Bool) {
      (self.model, self.threads, self.cells, self.batchSize) = (model, threads, cells, batchSize)
      let weights = pages ? model.weightPages : nil
      self.pages = [HugePageMove(weights: weights), HugePageMove(weights: weights)]
      let vocab = llama_model_get_vocab(model.pointer)
      let bos = llama_vocab_bos(vocab)
      token = bos >= 0 && bos < llama_vocab_n_tokens(vocab) ? bos : 0
    }

    /// Made as `BatchedContext.makeContext` makes one, of `cells` cells.
    mutating func makeContexts() throws(AttentionCalibration.Failure) {
      for flash in [false, true] {
        if LlamaBackend.inFlight.isStopping { throw .init(reason: "the process is exiting") }
        var params = llama_context_default_params()
        params.n_ctx = UInt32(clamping: cells)
        params.n_batch = UInt32(clamping: max(1, batchSize))
        params.n_ubatch = params.n_batch
        params.n_seq_max = 1
        params.kv_unified = false
        params.n_threads = Int32(clamping: threads)
        params.n_threads_batch = Int32(clamping: threads)
        params.no_perf = true
        params.flash_attn_type = flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED
        pages[contexts.count].install(in: &params)
        guard let context = llama_init_from_model(model.pointer, params) else {
          throw .init(reason: "llama.cpp could not create a context of \(cells) cells")
        }
        contexts.append(context)
      }
    }

    /// Brings both contexts' sequence 0 to `depth` cells: cut short from a
    /// deeper fill, or loaded as `depth` copies of one decoded cell
    /// (`SequenceStateLayout.repeated`) when deeper than the last.
    mutating func reach(_ depth: Int) throws(AttentionCalibration.Failure) {
      if oneCell.isEmpty { try decodeOneCell() }
      if depth <= filled {
        for context in contexts where !llama_memory_seq_rm(llama_get_memory(context), 0, Int32(depth), -1) {
          throw .init(reason: "llama.cpp could not cut the sequence at \(depth)")
        }
      } else {
        for (context, one) in zip(contexts, oneCell) {
          guard SequenceStateLayout.repeated(one, cells: depth, into: &deep) else {
            throw .init(reason: "this llama.cpp's sequence state is not one the calibration can repeat")
          }
          _ = llama_memory_seq_rm(llama_get_memory(context), 0, -1, -1)
          guard llama_state_seq_set_data(context, deep, deep.count, 0) == deep.count else {
            throw .init(reason: "llama.cpp refused a state of \(depth) cells")
          }
        }
      }
      filled = depth
    }

    /// Decodes one token at position 0 in each context and keeps its one-cell state.
    private mutating func decodeOneCell() throws(AttentionCalibration.Failure) {
      for (context, pages) in zip(contexts, pages) {
        _ = try decode(context, at: 0)
        // Not a timed step: the weights move on it, outside the time budget too.
        if let moved = pages.finish() {
          movingSeconds += moved.totalTime / .seconds(1)
          HugePageMove.log(
            moved, reason: "weights read in, on 2 MiB pages (moved by the flash-attention calibration's context)")
        }
        let size = llama_state_seq_get_size(context, 0)
        guard size > 0, size <= 1 << 26 else { throw .init(reason: "a one-token state of \(size) bytes") }
        var one = [UInt8](repeating: 0, count: size)
        guard llama_state_seq_get_data(context, &one, size, 0) == size else {
          throw .init(reason: "llama.cpp could not read a one-token state")
        }
        oneCell.append(one)
      }
      filled = 1
    }

    /// Seconds one decode step at `depth` takes; the new cell is dropped again.
    mutating func step(flash: Bool, at depth: Int) throws(AttentionCalibration.Failure) -> Double {
      if LlamaBackend.inFlight.isStopping { throw .init(reason: "the process is exiting") }
      let context = contexts[flash ? 1 : 0]
      let seconds = try decode(context, at: depth)
      guard llama_memory_seq_rm(llama_get_memory(context), 0, Int32(depth), -1) else {
        throw .init(reason: "llama.cpp could not drop the step's cell at \(depth)")
      }
      return seconds
    }

    private mutating func decode(_ context: OpaquePointer, at position: Int) throws(AttentionCalibration.Failure)
      -> Double
    {
      batch.n_tokens = 1
      batch.token[0] = token
      batch.pos[0] = Int32(position)
      batch.n_seq_id[0] = 1
      batch.seq_id[0]?[0] = 0
      batch.logits[0] = 1
      let start = DispatchTime.now().uptimeNanoseconds
      let status = llama_decode(context, batch)
      let end = DispatchTime.now().uptimeNanoseconds
      guard status == 0 else { throw .init(reason: "llama_decode failed (\(status)) at \(position)") }
      return Double(end &- start) / 1e9
    }

    func free() {
      for context in contexts { llama_free(context) }
      llama_batch_free(batch)
    }
  }
}
