import CLlama
import Foundation
import XCTest

@testable import HybridInferenceLlama

/// The whole-step calibration behind `FlashAttention.automatic`
/// (`AttentionStepCalibration`) and the state it loads instead of decoding
/// the depth (`SequenceStateLayout.repeated`): the layout on made-up bytes,
/// then for real on the tiny model. Never a speed assertion.
final class AttentionStepCalibrationTests: XCTestCase {
  /// A one-cell state as llama.cpp writes it for a one-stream context: two
  /// layers of K 4 bytes wide, then V as rows or (`transposed`) 2 columns of
  /// 2-byte elements.
  private func oneCell(transposed: Bool) -> [UInt8] {
    var bytes: [UInt8] = [0x51, 0x45, 0x4B, 0x56] + words([0, 1, 1, 0, 1, 0, transposed ? 1 : 0, 2])
    for layer in 0..<2 {
      bytes += words([1]) + words([4, 0]) + [10, 11, 12, 13].map { $0 + UInt8(layer) * 10 }
    }
    for layer in 0..<2 {
      if transposed {
        bytes += words([1, 2, 2]) + [50, 51, 52, 53].map { $0 + UInt8(layer) * 10 }
      } else {
        bytes += words([1]) + words([4, 0]) + [50, 51, 52, 53].map { $0 + UInt8(layer) * 10 }
      }
    }
    return bytes
  }

  private func words(_ values: [UInt32]) -> [UInt8] {
    values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
  }

  func testOneCellRepeated_isEveryCellAtItsPosition_withTheSameKAndV() throws {
    let rows = try XCTUnwrap(SequenceStateLayout.repeated(oneCell(transposed: false), cells: 3))
    var expected: [UInt8] = [0x51, 0x45, 0x4B, 0x56] + words([0, 1, 3, 0, 1, 0, 1, 1, 0, 2, 1, 0, 0, 2])
    for layer in 0..<2 {
      expected += words([1]) + words([4, 0])
      for _ in 0..<3 { expected += [10, 11, 12, 13].map { $0 + UInt8(layer) * 10 } }
    }
    for layer in 0..<2 {
      expected += words([1]) + words([4, 0])
      for _ in 0..<3 { expected += [50, 51, 52, 53].map { $0 + UInt8(layer) * 10 } }
    }
    XCTAssertEqual(rows, expected)
    // Transposed V: per dimension, its element once per cell.
    let columns = try XCTUnwrap(SequenceStateLayout.repeated(oneCell(transposed: true), cells: 3))
    let values = Array(columns.suffix(2 * (12 + 12)))
    XCTAssertEqual(
      values,
      words([1, 2, 2]) + [50, 51, 50, 51, 50, 51, 52, 53, 52, 53, 52, 53] + words([1, 2, 2])
        + [60, 61, 60, 61, 60, 61, 62, 63, 62, 63, 62, 63])
  }

  /// The calibration's second context reuses the first one's buffer (the
  /// two layouts are as long): written in place it is the state a fresh
  /// array holds, and a layout it cannot repeat leaves it empty.
  func testARepeatedState_writtenIntoABuffer_isTheFreshOne() throws {
    var state: [UInt8] = []
    XCTAssertTrue(SequenceStateLayout.repeated(oneCell(transposed: false), cells: 3, into: &state))
    XCTAssertEqual(state, SequenceStateLayout.repeated(oneCell(transposed: false), cells: 3))
    let firstLength = state.count
    XCTAssertTrue(SequenceStateLayout.repeated(oneCell(transposed: true), cells: 3, into: &state))
    XCTAssertEqual(state.count, firstLength, "both layouts are as long: rewritten in place")
    XCTAssertEqual(state, SequenceStateLayout.repeated(oneCell(transposed: true), cells: 3))
    XCTAssertTrue(SequenceStateLayout.repeated(oneCell(transposed: true), cells: 5, into: &state))
    XCTAssertEqual(state, SequenceStateLayout.repeated(oneCell(transposed: true), cells: 5), "another length")
    XCTAssertFalse(SequenceStateLayout.repeated(Array(oneCell(transposed: true).dropLast()), cells: 3, into: &state))
    XCTAssertEqual(state, [])
  }

  func testAStateItDoesNotKnow_isNotRepeated() {
    let good = oneCell(transposed: false)
    var twoStreams = good
    twoStreams[8] = 2
    var twoSequences = good
    twoSequences[20] = 2
    var notAtZero = good
    notAtZero[16] = 5
    var hugeRow = good
    hugeRow.replaceSubrange(40..<48, with: words([0xFFFF_FFF0, 0]))
    // Transposed V whose element size times width overflows, or is 0 wide, or 2^31 layers.
    var columns = oneCell(transposed: true)
    let firstValue = columns.count - 2 * (12 + 4)
    var overflowing = columns
    overflowing.replaceSubrange((firstValue + 4)..<(firstValue + 12), with: words([16, 0x7FFF_FFFF]))
    var zeroWide = columns
    zeroWide.replaceSubrange((firstValue + 8)..<(firstValue + 12), with: words([0]))
    columns.replaceSubrange(32..<36, with: words([0x8000_0000]))
    let layouts = [
      good + [0], Array(good.dropLast()), twoStreams, twoSequences, notAtZero, hugeRow, Array(good.prefix(30)), [],
      overflowing, zeroWide, columns,
    ]
    for bytes in layouts {
      XCTAssertNil(SequenceStateLayout.repeated(bytes, cells: 4), "\(bytes)")
    }
    XCTAssertNil(SequenceStateLayout.repeated(good, cells: 0))
    XCTAssertNil(SequenceStateLayout.repeated(good, cells: Int.max / 2), "a state past the byte cap")
  }

  /// llama.cpp itself takes the repeated state, with V transposed (flash
  /// attention off) and not: the sequence then holds `depth` cells, and the
  /// next token decodes at that position.
  func testARepeatedState_loadsIntoLlamaCpp_atTheDepth_bothWays() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 1024).loadedModel(progress: nil)
    for flash in [LLAMA_FLASH_ATTN_TYPE_DISABLED, LLAMA_FLASH_ATTN_TYPE_ENABLED] {
      let outcome = try await ComputeLane.run(threads: 2) { () -> String? in
        var params = llama_context_default_params()
        (params.n_ctx, params.n_batch, params.n_ubatch, params.n_seq_max) = (512, 8, 8, 1)
        params.flash_attn_type = flash
        guard let context = llama_init_from_model(loaded.pointer, params) else { return "no context" }
        defer { llama_free(context) }
        var token: llama_token = 1
        guard llama_decode(context, llama_batch_get_one(&token, 1)) == 0 else { return "first decode" }
        let size = llama_state_seq_get_size(context, 0)
        var one = [UInt8](repeating: 0, count: size)
        guard llama_state_seq_get_data(context, &one, size, 0) == size,
          let deep = SequenceStateLayout.repeated(one, cells: 300)
        else { return "not repeated" }
        let memory = llama_get_memory(context)
        _ = llama_memory_seq_rm(memory, 0, -1, -1)
        guard llama_state_seq_set_data(context, deep, deep.count, 0) == deep.count else { return "refused" }
        guard llama_memory_seq_pos_max(memory, 0) == 299 else { return "holds \(llama_memory_seq_pos_max(memory, 0))" }
        var batch = llama_batch_init(1, 0, 1)
        defer { llama_batch_free(batch) }
        batch.n_tokens = 1
        (batch.token[0], batch.pos[0], batch.n_seq_id[0], batch.logits[0]) = (1, 300, 1, 1)
        batch.seq_id[0]?[0] = 0
        return llama_decode(context, batch) == 0 && llama_memory_seq_pos_max(memory, 0) == 300 ? nil : "next decode"
      }
      XCTAssertNil(outcome, "flash attention \(flash.rawValue)")
    }
  }

  func testTheRealSteps_onTheTinyModel_timeEveryCell() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 2048).loadedModel(progress: nil)
    let shape = try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded))
    let timings = try await ComputeLane.run(threads: 2) {
      AttentionStepCalibration.measure(model: loaded, shape: shape, depths: [0, 256, 1024], threads: 2, batchSize: 512)
    }.get()
    XCTAssertTrue(timings.wholeSteps)
    // Every depth, but the deepest where the others fix its reading.
    let measured = timings.cells.map(\.depth)
    XCTAssertTrue(measured == [0, 256, 1024] || measured == [0, 256], "\(measured)")
    if measured == [0, 256] {
      XCTAssertTrue(
        AttentionCalibration.deeperDepthsFollow(
          timings.cells, farApart: AttentionStepCalibration.farApartFraction,
          margin: AttentionCalibration.stepTieMargin), "\(timings.cells)")
    }
    for cell in timings.cells {
      // Every repetition, or at least `minimumRepetitions` past the time budget (busy cores), or
      // fewer where the pairs settle the depth: `settledRepetitions`, two where they lie far
      // apart. (The deepest, which decides, may take more while its pairs leave the verdict open.)
      let most =
        cell.depth == 1024
        ? AttentionStepCalibration.maximumRepetitions : AttentionStepCalibration.repetitions(atDepth: cell.depth)
      XCTAssertTrue((fewestPairs(cell)...most).contains(cell.on.count), "\(cell)")
      XCTAssertEqual(cell.on.count, cell.off.count)
      XCTAssertTrue((cell.on + cell.off).allSatisfy { $0 > 0 && $0 < 10 }, "\(cell)")
    }
    XCTAssertTrue(AttentionCalibration.decide(timings).reason.contains("decode steps measured"))
  }

  /// Four depths, as `.automatic` measures: the shallowest, two states
  /// loaded one after the other (512, then 1,024 cells), then 256 cut short
  /// from the deepest; every depth timed in pairs, or the deepest skipped
  /// only where the two measured before it fix its reading.
  func testFourDepths_loadTwoStates_andCutTheLastShort() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 2048).loadedModel(progress: nil)
    let shape = try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded))
    let timings = try await ComputeLane.run(threads: 2) {
      AttentionStepCalibration.measure(
        model: loaded, shape: shape, depths: [0, 256, 512, 1024], threads: 2, batchSize: 512)
    }.get()
    let measured = timings.cells.map(\.depth)
    XCTAssertTrue(measured == [0, 256, 512, 1024] || measured == [0, 256, 512], "\(measured)")
    if measured.count == 3 {
      let beforeTheDeepest = timings.cells.filter { $0.depth != 256 }
      XCTAssertTrue(
        AttentionCalibration.deeperDepthsFollow(
          beforeTheDeepest, farApart: AttentionStepCalibration.farApartFraction,
          margin: AttentionCalibration.stepTieMargin), "\(timings.cells)")
    }
    for cell in timings.cells {
      XCTAssertEqual(cell.on.count, cell.off.count)
      XCTAssertGreaterThanOrEqual(cell.on.count, 2, "\(cell)")
      XCTAssertTrue((cell.on + cell.off).allSatisfy { $0 > 0 && $0 < 10 }, "\(cell)")
    }
  }

  /// The depth lists of tiny windows (`depths(contextSize:)` of 1, 2 and
  /// 4): a fill of one cell cut to 0 and to 1, and loads one cell apart.
  func testTinyWindowsDepths_areEachMeasuredOrFollow() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 2048).loadedModel(progress: nil)
    let shape = try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded))
    for depths in [[0], [0, 1], [0, 1, 2, 3]] {
      let timings = try await ComputeLane.run(threads: 2) {
        AttentionStepCalibration.measure(model: loaded, shape: shape, depths: depths, threads: 2, batchSize: 512)
      }.get()
      let measured = timings.cells.map(\.depth)
      // Every depth, or all but the deepest where the shallower ones fix it.
      XCTAssertTrue(measured == depths || measured == depths.filter { $0 != depths.max() }, "\(depths): \(measured)")
      for cell in timings.cells { XCTAssertGreaterThanOrEqual(min(cell.on.count, cell.off.count), 2, "\(cell)") }
    }
  }

  /// A host slow enough to spend the whole budget early (the deepest depth
  /// runs first) still leaves every other depth its minimum of pairs: with
  /// two, one stalled step would decide that depth's median.
  func testTheBudgetSpentAtTheDeepestDepth_stillLeavesEveryDepthItsMinimum() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 2048).loadedModel(progress: nil)
    let shape = try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded))
    let timings = try await ComputeLane.run(threads: 2) {
      AttentionStepCalibration.measure(
        model: loaded, shape: shape, depths: [0, 256, 1024], threads: 2, batchSize: 512, budget: 0)
    }.get()
    for cell in timings.cells {
      // The minimum, or fewer only where the pairs settled the depth first.
      XCTAssertEqual(cell.on.count, cell.off.count)
      XCTAssertTrue(
        (fewestPairs(cell)...AttentionStepCalibration.minimumRepetitions).contains(cell.on.count), "\(cell)")
    }
  }

  /// The fewest pairs `cell` may have stopped at, by what its pairs show:
  /// two far apart, `settledRepetitions` settled, else `minimumRepetitions`.
  private func fewestPairs(_ cell: AttentionCalibration.Cell) -> Int {
    if AttentionCalibration.isFarApart(cell, fraction: AttentionStepCalibration.farApartFraction) { return 2 }
    if AttentionCalibration.isSettled(cell, margin: AttentionCalibration.stepTieMargin) {
      return AttentionStepCalibration.settledRepetitions
    }
    return AttentionStepCalibration.minimumRepetitions
  }

  /// How many pairs a depth gets, from stated timings: a depth whose pairs
  /// settle it stops at three; an open one gets five whatever the budget,
  /// its plan within the budget, and, where it decides, more while it sits
  /// near the margin, up to the cap.
  func testADepth_getsPairsWhileItIsOpen_andTheBudgetLasts() {
    func cell(_ ratios: [Double]) -> AttentionCalibration.Cell {
      AttentionCalibration.Cell(depth: 1024, off: ratios.map { _ in 0.010 }, on: ratios.map { 0.010 * $0 })
    }
    func wants(_ ratios: [Double], planned: Int = 15, deciding: Bool = false, elapsed: Double = 0) -> Bool {
      AttentionStepCalibration.wantsAnotherPair(
        cell(ratios), planned: planned, deciding: deciding, elapsed: elapsed, budget: 0.5)
    }
    let clear = [2.0, 2.1, 1.9]  // on 2x slower (the Xeon at depth)
    XCTAssertFalse(wants(clear), "settled at three pairs")
    XCTAssertFalse(wants([0.5, 0.52, 0.49]), "on 2x faster: settled too")
    XCTAssertFalse(wants([1.0, 1.001, 0.999]), "a tight tie is settled within the margins")
    XCTAssertTrue(wants(Array(clear.prefix(1))), "one pair settles nothing")
    XCTAssertFalse(wants(Array(clear.prefix(2))), "two pairs 2x apart: far apart, settled")
    XCTAssertFalse(wants([0.6, 0.7]), "on far ahead in both: settled")
    XCTAssertTrue(wants([1.02, 10]), "one stalled step does not settle two pairs")
    XCTAssertTrue(wants([1.3, 1.15]), "one pair within the far-apart gap: open")
    XCTAssertTrue(wants([1.3, 0.7]), "the pairs disagree: open")
    let nearMargin = [1.0, 1.1, 1.02, 1.08, 1.05]  // on ~5% behind: where the verdict turns
    XCTAssertTrue(wants(Array(nearMargin.prefix(3)), elapsed: 9), "an open depth gets five past the budget")
    XCTAssertFalse(wants(nearMargin, elapsed: 0.6), "five, then the budget ends it")
    XCTAssertTrue(wants(nearMargin, planned: 15), "within the budget: its plan")
    XCTAssertFalse(wants(nearMargin, planned: 5), "its plan done")
    XCTAssertTrue(wants(nearMargin, planned: 5, deciding: true), "the deciding depth, still open")
    let thirty = Array(repeating: nearMargin, count: 6).flatMap { $0 }
    XCTAssertFalse(wants(thirty, planned: 5, deciding: true), "up to the cap")
  }

  /// The contexts hold the deepest depth and an answer's room, as the
  /// library sizes a conversation's (the off path's speed moves with the
  /// context's length); nonsense depths are refused by size.
  func testTheContexts_holdTheDeepestDepthAndAnAnswersRoom() {
    XCTAssertEqual([0, 256, 1024, 3072].map(AttentionStepCalibration.cells(forDeepest:)), [512, 768, 1536, 3584])
    XCTAssertEqual(AttentionStepCalibration.cells(forDeepest: -1), Int.max)
    XCTAssertEqual(AttentionStepCalibration.cells(forDeepest: Int.max), Int.max)
  }

  /// The shallowest, the two deepest (the second can spare the deepest),
  /// then the rest cut short from the deepest's state.
  func testTheOrder_isShallowestThenTheTwoDeepestThenTheRestDescending() {
    XCTAssertEqual(AttentionStepCalibration.order(of: [0, 256, 1024, 3072]), [0, 1024, 3072, 256])
    XCTAssertEqual(AttentionStepCalibration.order(of: [3072, 0, 1024, 256, 2048]), [0, 2048, 3072, 1024, 256])
    XCTAssertEqual(AttentionStepCalibration.order(of: [0, 256, 511]), [0, 256, 511])
    XCTAssertEqual(AttentionStepCalibration.order(of: [255, 0]), [0, 255])
    XCTAssertEqual(AttentionStepCalibration.order(of: []), [])
  }

  func testDeeperDepths_getMoreRepetitions() {
    XCTAssertEqual([0, 256, 1024, 4000].map(AttentionStepCalibration.repetitions(atDepth:)), [5, 10, 15, 15])
  }

  /// A model is too slow to time by steps when both settings' first steps
  /// are; one setting far behind is what the calibration is for (a small
  /// model's flash-attention step deep in the cache can be several times its
  /// step without).
  func testOneSlowSetting_isTimed_bothSlow_isNot() {
    let limit = AttentionStepCalibration.maximumStepSeconds
    XCTAssertFalse(AttentionStepCalibration.isTooSlowToTime(firstSteps: (on: 0.103, off: 0.025), slowestStep: limit))
    XCTAssertFalse(AttentionStepCalibration.isTooSlowToTime(firstSteps: (on: 0.020, off: 0.090), slowestStep: limit))
    XCTAssertTrue(AttentionStepCalibration.isTooSlowToTime(firstSteps: (on: 0.300, off: 0.280), slowestStep: limit))
    XCTAssertTrue(AttentionStepCalibration.isTooSlowToTime(firstSteps: (on: 0.061, off: 0.070), slowestStep: limit))
  }

  func testASlowStepOrAHugeCache_isNotTimed_andSaysWhy() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 2048).loadedModel(progress: nil)
    let shape = try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded))
    let slow = try await ComputeLane.run(threads: 2) {
      AttentionStepCalibration.measure(
        model: loaded, shape: shape, depths: [0, 256], threads: 2, batchSize: 512, slowestStep: 0)
    }
    guard case .failure(let failure) = slow else { return XCTFail("timed a step slower than allowed") }
    XCTAssertTrue(failure.reason.hasPrefix("a decode step takes"), failure.reason)
    // A header's worth of layers and heads: refused from the arithmetic, before any context.
    let huge = try XCTUnwrap(
      AttentionCalibrationGraph.Shape(layers: 4096, heads: 4096, kvHeads: 4096, headSize: 1024, kvType: GGML_TYPE_F16))
    guard
      case .failure(let refused) = AttentionStepCalibration.measure(
        model: loaded, shape: huge, depths: [0, 1024], threads: 2, batchSize: 512)
    else { return XCTFail("made a context for 4,096 layers of 4,096 heads") }
    XCTAssertTrue(refused.reason.contains("MiB of K/V"), refused.reason)
  }
}
