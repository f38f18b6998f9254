import CLlama
import Foundation
import HybridInferenceCore

/// Times real decode steps of a loaded model with and without flash
/// attention, at a few depths, on the context's thread count: the first
/// measurement behind `FlashAttention.automatic` on the CPU backend
/// (`AttentionChoice.calibrated`).
///
/// Why whole steps: the attention-only graph (`AttentionCalibrationGraph`)
/// agreed with llama-bench on 1 thread but not on 2, where it measured
/// SmolLM2's attention 20% dearer with the fused kernel on an AMD EPYC while
/// the whole step was 5-7% faster with it (RESULTS.md §1d). A step of the
/// real model on a real context is what a conversation pays, with the
/// weights evicting K/V and the threads' split as they are.
///
/// Why no prefill: the depth is loaded, not decoded. One token is decoded at
/// position 0, its sequence state is read, and a state of `depth` copies of
/// that cell is loaded back (`SequenceStateLayout.repeated`): a few
/// milliseconds, where 1,024 tokens of prefill take over half a second on 2
/// cores. The K/V values are real ones (the copied cell's), and the time of a
/// step does not depend on them.
///
/// Bounded: two contexts of `cells(atDepth:)` of the deepest depth (not the
/// window), refused when their K/V would pass `maximumCacheBytes`; a model
/// whose step takes more than `maximumStepSeconds` is not timed this way (the
/// graph, whose cost does not grow with the weights, measures instead); no
/// new repetition starts past `timeBudget` once every depth has
/// `minimumRepetitions`.
enum AttentionStepCalibration {
  /// The most K/V bytes of one calibration context: 128 MiB.
  static let maximumCacheBytes = 128 << 20
  /// The slowest first step timed further: 60 ms (SmolLM2 135M takes 6-9 ms
  /// on 2 cores at 1,024 tokens; a model of several billion weights takes
  /// hundreds, and its whole calibration would take seconds).
  static let maximumStepSeconds = 0.06
  /// Timed repetitions of a (depth, setting) cell after one warm-up:
  /// `minimumRepetitions` per unit of the depth's weight
  /// (`AttentionCalibration.weight(ofDepth:)`), at most 15, so 5 at depth 0,
  /// 10 at 256 and 15 at 1,024 and 3,072, where the
  /// decision is made (25 at 1,024 cost SmolLM2 0.85 s in all):
  /// SmolLM2's two settings are 1-5% apart there on an AMD EPYC, and one
  /// step's noise on shared cores is ±5%.
  static func repetitions(atDepth depth: Int) -> Int {
    min(15, Int((Double(minimumRepetitions) * AttentionCalibration.weight(ofDepth: depth)).rounded()))
  }
  /// The most repetitions at the deepest depth while its pairs leave the
  /// verdict open (`AttentionCalibration.isUnresolved`): 30.
  static let maximumRepetitions = 30
  /// Seconds after which no further repetition starts, once a depth has
  /// `minimumRepetitions`.
  static let timeBudget = 0.7
  /// The timed repetitions every depth gets, past the time budget, and the
  /// unit of `repetitions(atDepth:)`: 5.
  ///
  /// Why not fewer: the deepest depth runs first and on a slow or busy host
  /// spends the whole budget (SmolLM2 at 23-28 ms a step on an AMD EPYC whose
  /// llama-bench decoded at half its usual speed, RESULTS.md §1d). With two
  /// pairs left to depth 0, one stalled step read off 38% slower there, where
  /// five pairs in later processes on that host read 20-21% and
  /// llama-bench 19%; depth 0 weighs in the worst-depth reading
  /// (`wholeStepVerdict`) as much as 1,024. Five pairs cost SmolLM2 on such a
  /// host about 0.2 s more at 0 and 256 together.
  static let minimumRepetitions = 5

  /// Times `model`'s decode step at each of `depths`, both ways; the calling
  /// thread must be a compute lane (`ComputeLanes`). A failure when the first
  /// step takes over `slowestStep` seconds; no repetition past
  /// `minimumRepetitions` starts after `budget` seconds (tests lower both).
  static func measure(
    model: LlamaModel, shape: AttentionCalibrationGraph.Shape, depths: [Int], threads: Int, batchSize: Int,
    slowestStep: Double = maximumStepSeconds, budget: Double = timeBudget
  ) -> Result<AttentionCalibration.Timings, AttentionCalibration.Failure> {
    guard let deepest = depths.max(), depths.allSatisfy({ $0 >= 0 && $0 < 1 << 20 }) else {
      return .failure(.init(reason: "no depth to measure"))
    }
    let cells = AttentionCalibrationGraph.cells(atDepth: deepest)
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
    var steps = Steps(model: model, threads: threads, cells: cells, batchSize: min(batchSize, cells))
    defer { steps.free() }
    do throws(AttentionCalibration.Failure) {
      try steps.makeContexts()
      try steps.load(depth: deepest)
      var result = AttentionCalibration.Timings(layers: shape.layers, timedLayers: shape.layers, wholeSteps: true)
      result.cells = depths.map { AttentionCalibration.Cell(depth: $0) }
      let start = DispatchTime.now().uptimeNanoseconds
      // Deepest first: each shallower depth is the deeper one cut short.
      for (done, index) in depths.indices.sorted(by: { depths[$0] > depths[$1] }).enumerated() {
        let depth = depths[index]
        try steps.truncate(to: depth)
        var limit = repetitions(atDepth: depth)
        var round = 0
        while round <= limit {
          defer { round += 1 }
          let elapsed = Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9
          if round > minimumRepetitions, elapsed > budget { break }
          // The deepest depth decides: while its pairs cannot yet tell the
          // settings apart from a tie, 5 more, up to `maximumRepetitions`.
          if round == limit, done == 0, limit < maximumRepetitions,
            AttentionCalibration.isUnresolved(
              result.cells[index], margin: AttentionCalibration.stepTieMargin)
          {
            limit += 5
          }
          // Alternating which goes first, so a slow moment does not always fall on one setting.
          for flash in (round + done).isMultiple(of: 2) ? [false, true] : [true, false] {
            let seconds = try steps.step(flash: flash, at: depth)
            if round == 0, done == 0, seconds > slowestStep {
              throw .init(reason: "a decode step takes \(Int(seconds * 1000)) ms")
            }
            guard round > 0 else { continue }
            if flash { result.cells[index].on.append(seconds) } else { result.cells[index].off.append(seconds) }
          }
        }
      }
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
    var batch = llama_batch_init(1, 0, 1)
    let token: llama_token

    init(model: LlamaModel, threads: Int, cells: Int, batchSize: Int) {
      (self.model, self.threads, self.cells, self.batchSize) = (model, threads, cells, batchSize)
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
        guard let context = llama_init_from_model(model.pointer, params) else {
          throw .init(reason: "llama.cpp could not create a context of \(cells) cells")
        }
        contexts.append(context)
      }
    }

    /// Fills both contexts' sequence 0 to `depth` cells.
    mutating func load(depth: Int) throws(AttentionCalibration.Failure) {
      for context in contexts {
        _ = try decode(context, at: 0)
        guard depth > 0 else { continue }
        let size = llama_state_seq_get_size(context, 0)
        guard size > 0, size <= 1 << 26 else { throw .init(reason: "a one-token state of \(size) bytes") }
        var one = [UInt8](repeating: 0, count: size)
        guard llama_state_seq_get_data(context, &one, size, 0) == size,
          let deep = SequenceStateLayout.repeated(one, cells: depth)
        else { throw .init(reason: "this llama.cpp's sequence state is not one the calibration can repeat") }
        _ = llama_memory_seq_rm(llama_get_memory(context), 0, -1, -1)
        guard llama_state_seq_set_data(context, deep, deep.count, 0) == deep.count else {
          throw .init(reason: "llama.cpp refused a state of \(depth) cells")
        }
      }
    }

    /// Drops every cell at `depth` and after.
    func truncate(to depth: Int) throws(AttentionCalibration.Failure) {
      for context in contexts where !llama_memory_seq_rm(llama_get_memory(context), 0, Int32(depth), -1) {
        throw .init(reason: "llama.cpp could not cut the sequence at \(depth)")
      }
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
