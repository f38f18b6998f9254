import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// A sequence state rewritten for the other flash-attention setting
/// (`SequenceStateLayout.withValues(transposed:_:tokens:)`): the layout on
/// made-up bytes, then for real on the tiny model, where llama.cpp refuses
/// the state unconverted and decodes from the converted one as from the
/// prompt decoded again. Never a speed assertion.
final class SequenceStateTransposeTests: XCTestCase {
  private func words(_ values: [UInt32]) -> [UInt8] {
    values.flatMap { value in withUnsafeBytes(of: value.littleEndian) { Array($0) } }
  }

  /// The kept state of 3 cells, one layer: K 4 bytes a cell, V F16 (type 1)
  /// 2 wide, as rows (cell-major) or transposed (dimension-major).
  private func kept(transposed: Bool) -> [UInt8] {
    var bytes: [UInt8] = [0x51, 0x45, 0x4B, 0x56] + words([0, 3, 0, 1, 0, 1, 1, 0, 2, 1, 0])
    bytes += words([transposed ? 1 : 0, 1]) + words([1]) + words([4, 0]) + Array(10..<22)
    // V: cell c, dimension d holds the element [c, d] (2 bytes: 0xc0 + c, 0xd0 + d).
    if transposed {
      bytes += words([1, 2, 2])
      for d in 0..<2 { for c in 0..<3 { bytes += [0xC0 + UInt8(c), 0xD0 + UInt8(d)] } }
    } else {
      bytes += words([1]) + words([4, 0])
      for c in 0..<3 { for d in 0..<2 { bytes += [0xC0 + UInt8(c), 0xD0 + UInt8(d)] } }
    }
    return bytes
  }

  func testRowsAndColumns_becomeEachOther_andKStaysAsItIs() {
    let (rows, columns) = (kept(transposed: false), kept(transposed: true))
    XCTAssertEqual(SequenceStateLayout.withValues(transposed: true, rows, tokens: 3), columns)
    XCTAssertEqual(SequenceStateLayout.withValues(transposed: false, columns, tokens: 3), rows)
    // Already laid out so: itself.
    XCTAssertEqual(SequenceStateLayout.withValues(transposed: false, rows, tokens: 3), rows)
  }

  func testAStateItDoesNotParse_isNotConverted() {
    let rows = kept(transposed: false)
    var quantized = rows  // V of Q4_0 (type 2): no transposed form
    quantized.replaceSubrange((rows.count - 24)..<(rows.count - 20), with: words([2]))
    var oddRow = rows  // a row of 3 bytes is not whole F16 elements
    oddRow.replaceSubrange((rows.count - 20)..<(rows.count - 16), with: words([3]))
    var hugeRow = rows
    hugeRow.replaceSubrange((rows.count - 20)..<(rows.count - 12), with: words([0xFFFF_FFFE, 0x7FFF_FFFF]))
    var hugeWidth = kept(transposed: true)
    hugeWidth.replaceSubrange((hugeWidth.count - 16)..<(hugeWidth.count - 12), with: words([0x7FFF_FFFF]))
    var moreLayers = rows  // three layers' K where there is one's, and a V
    moreLayers.replaceSubrange(52..<56, with: words([3]))
    var noLayers = rows
    noLayers.replaceSubrange(52..<56, with: words([0]))
    var tooManyLayers = rows
    tooManyLayers.replaceSubrange(52..<56, with: words([4097]))
    var longK = rows  // a K row of 40 bytes: 120 for three cells, past the end
    longK.replaceSubrange(60..<68, with: words([40, 0]))
    var overflowingK = rows  // a K row of 2^63 bytes
    overflowingK.replaceSubrange(60..<68, with: words([0xFFFF_FFFF, 0x7FFF_FFFF]))
    let damaged = [quantized, oddRow, hugeRow, moreLayers, noLayers, tooManyLayers, longK, overflowingK]
    for bytes in [rows + [0], Array(rows.dropLast()), Array(rows.prefix(20)), []] + damaged {
      XCTAssertNil(SequenceStateLayout.withValues(transposed: true, bytes, tokens: 3), "\(bytes)")
    }
    XCTAssertNil(SequenceStateLayout.withValues(transposed: false, hugeWidth, tokens: 3))
    XCTAssertNil(SequenceStateLayout.withValues(transposed: true, rows, tokens: 4), "a cell count it does not hold")
  }

  /// Twelve tokens decoded with flash attention on, the state converted and
  /// loaded into a context without it, then one more token: its logits are
  /// those of the context without it that decoded the twelve itself (within
  /// what the two kernels' rounding differ by), and the unconverted state is
  /// refused. And back: off to on. (Measured 1e-5 apart of 13; V copied
  /// untransposed, 0.2.)
  func testAConvertedState_loadsIntoTheOtherSetting_andDecodesAsTheTokensDecodedThere() async throws {
    let loaded = try await LocalTestModels.tiny(contextSize: 256).loadedModel(progress: nil)
    let prompt: [llama_token] = (0..<12).map { llama_token(5 + 3 * $0) }
    let outcome = try await ComputeLane.run(threads: 2) { () -> String? in
      let on = LLAMA_FLASH_ATTN_TYPE_ENABLED
      let off = LLAMA_FLASH_ATTN_TYPE_DISABLED
      for (from, to) in [(on, off), (off, on)] {
        guard let source = Self.context(loaded, flash: from), let target = Self.context(loaded, flash: to),
          let reference = Self.context(loaded, flash: to)
        else { return "no context" }
        defer { for context in [source, target, reference] { llama_free(context) } }
        guard Self.decode(prompt, at: 0, in: source), Self.decode(prompt, at: 0, in: reference) else {
          return "prompt"
        }
        let size = llama_state_seq_get_size(source, 0)
        var raw = [UInt8](repeating: 0, count: size)
        guard llama_state_seq_get_data(source, &raw, size, 0) == size else { return "state" }
        guard llama_state_seq_set_data(target, raw, raw.count, 0) == 0 else { return "took it unconverted" }
        guard let kept = SequenceStateLayout.canonical(raw, sequence: 0, streams: 1, tokens: prompt.count),
          let converted = SequenceStateLayout.withValues(transposed: to == off, kept, tokens: prompt.count)
        else { return "not converted" }
        let bytes = SequenceStateLayout.expanded(converted, sequence: 0, streams: 1)
        guard llama_state_seq_set_data(target, bytes, bytes.count, 0) == bytes.count else { return "refused" }
        guard Self.decode([7], at: prompt.count, in: target), Self.decode([7], at: prompt.count, in: reference) else {
          return "next token"
        }
        let count = Int(llama_vocab_n_tokens(llama_model_get_vocab(loaded.pointer)))
        guard let mine = llama_get_logits_ith(target, -1), let theirs = llama_get_logits_ith(reference, -1) else {
          return "logits"
        }
        let scale = (0..<count).map { abs(theirs[$0]) }.max() ?? 0
        let apart = (0..<count).map { abs(mine[$0] - theirs[$0]) }.max() ?? .infinity
        guard scale > 0, apart <= 0.001 * scale else { return "logits \(apart) apart of \(scale)" }
      }
      return nil
    }
    XCTAssertNil(outcome)
  }

  private static func context(_ model: LlamaModel, flash: llama_flash_attn_type) -> OpaquePointer? {
    var params = llama_context_default_params()
    (params.n_ctx, params.n_batch, params.n_ubatch, params.n_seq_max) = (256, 16, 16, 1)
    (params.n_threads, params.n_threads_batch) = (2, 2)
    params.flash_attn_type = flash
    return llama_init_from_model(model.pointer, params)
  }

  private static func decode(_ tokens: [llama_token], at position: Int, in context: OpaquePointer) -> Bool {
    var batch = llama_batch_init(Int32(tokens.count), 0, 1)
    defer { llama_batch_free(batch) }
    batch.n_tokens = Int32(tokens.count)
    for (index, token) in tokens.enumerated() {
      (batch.token[index], batch.pos[index], batch.n_seq_id[index]) = (token, llama_pos(position + index), 1)
      batch.seq_id[index]?[0] = 0
      batch.logits[index] = index == tokens.count - 1 ? 1 : 0
    }
    return llama_decode(context, batch) == 0
  }
}
