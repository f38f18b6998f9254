import CLlama

/// A sequence state rewritten for a context with the other flash-attention
/// setting: what lets a context made again without the kernel
/// (`BatchedContext.fitWindow`, past `AttentionChoice.Decision.offFromDepth`)
/// keep its conversations instead of decoding them again.
///
/// Why a rewrite is needed: without flash attention llama.cpp keeps V
/// transposed (a row per head dimension, an element per cell) and writes a
/// state so (`v_trans` 1: each layer's type, element size and width, then
/// per dimension an element per cell); with it, a row per cell (`v_trans` 0:
/// type, row size, then a row per cell), and it refuses a state of the other
/// kind ("incompatible V transposition"). K is a row per cell either way.
/// Turning one into the other is a transpose of each layer's V, a few
/// milliseconds for a thousand tokens of SmolLM2, where decoding them again
/// is over a second on 2 cores.
///
/// It reads the kept form (`SequenceStateLayout.canonical`), checks every
/// size against the bytes there are, and gives nil for anything it does not
/// parse to the last byte (a quantized V, which has no transposed form; a
/// layout of another llama.cpp): the caller then decodes again.
extension SequenceStateLayout {
  /// `kept`, the kept state of `tokens` cells, with V laid out as a context
  /// with (`transposed` false) or without (`transposed` true) flash attention
  /// reads it; `kept` itself when it already is; nil when it does not parse.
  static func withValues(transposed: Bool, _ kept: [UInt8], tokens: Int) -> [UInt8]? {
    guard isValid(kept, tokens: tokens, tag: Array(kept.prefix(tagSize))) else { return nil }
    var offset = tagSize + 4 + tokens * cellSize
    guard kept.count - offset >= 8 else { return nil }
    let isTransposed = word(kept, at: offset)
    let layers = word(kept, at: offset + 4)
    guard isTransposed <= 1, (1...4096).contains(layers) else { return nil }
    if (isTransposed == 1) == transposed { return kept }
    var result = Array(kept[..<offset])
    result.reserveCapacity(kept.count)
    append(transposed ? 1 : 0, to: &result)
    append(layers, to: &result)
    offset += 8
    // K: a type and a row size, then a row per cell; copied as it is.
    for _ in 0..<layers {
      guard kept.count - offset >= 12 else { return nil }
      let row = word64(kept, at: offset + 4)
      guard row > 0, row <= UInt64(kept.count), let size = checkedProduct(Int(row), tokens),
        size <= kept.count - offset - 12
      else { return nil }
      result += kept[offset..<(offset + 12 + size)]
      offset += 12 + size
    }
    // V: for the layers that have it, until the last byte.
    var values: UInt32 = 0
    while offset < kept.count {
      guard values < layers,
        let next = rewriteValues(kept, at: offset, tokens: tokens, transposed: transposed, into: &result)
      else { return nil }
      (offset, values) = (next, values + 1)
    }
    return offset == kept.count ? result : nil
  }

  /// One layer's V, read in the other layout and appended in this one (to
  /// an element per cell per dimension when `transposed`, else a row per
  /// cell); returns the offset after it.
  private static func rewriteValues(
    _ kept: [UInt8], at offset: Int, tokens: Int, transposed: Bool, into result: inout [UInt8]
  ) -> Int? {
    guard kept.count - offset >= 12 else { return nil }
    let type = word(kept, at: offset)
    guard let element = elementSize(ofType: type) else { return nil }
    // Rows: a row size (8 bytes). Columns: the element size and the width (4 each).
    let row = transposed ? word64(kept, at: offset + 4) : UInt64(word(kept, at: offset + 8)) * UInt64(element)
    guard transposed || Int(word(kept, at: offset + 4)) == element, row > 0, row <= UInt64(kept.count),
      Int(row) % element == 0, let size = checkedProduct(Int(row), tokens), size <= kept.count - offset - 12
    else { return nil }
    let width = Int(row) / element
    append(type, to: &result)
    if transposed {
      append(UInt32(element), to: &result)
      append(UInt32(truncatingIfNeeded: width), to: &result)
    } else {
      append(UInt32(truncatingIfNeeded: row), to: &result)
      append(UInt32(truncatingIfNeeded: row >> 32), to: &result)
    }
    let (rows, columns) = transposed ? (tokens, width) : (width, tokens)
    transpose(kept, from: offset + 12, rows: rows, columns: columns, element: element, into: &result)
    return offset + 12 + size
  }

  /// Appends the transpose of the `rows` x `columns` matrix of `element`-byte
  /// elements at `start` of `source` (row after row) to `result`. The caller
  /// has checked that the matrix lies within `source`.
  private static func transpose(
    _ source: [UInt8], from start: Int, rows: Int, columns: Int, element: Int, into result: inout [UInt8]
  ) {
    let base = result.count
    result += repeatElement(0, count: rows * columns * element)
    source.withUnsafeBytes { input in
      result.withUnsafeMutableBytes { output in
        for row in 0..<rows {
          for column in 0..<columns {
            let from = start + (row * columns + column) * element
            let to = base + (column * rows + row) * element
            if element == 2 {
              output.storeBytes(
                of: input.loadUnaligned(fromByteOffset: from, as: UInt16.self), toByteOffset: to, as: UInt16.self)
            } else {
              for byte in 0..<element { output[to + byte] = input[from + byte] }
            }
          }
        }
      }
    }
  }

  /// The bytes of one element of a ggml type whose blocks are one element
  /// (F32, F16, BF16, ...): the only types llama.cpp keeps V transposed in.
  private static func elementSize(ofType raw: UInt32) -> Int? {
    guard raw < GGML_TYPE_COUNT.rawValue, ggml_blck_size(ggml_type(raw)) == 1 else { return nil }
    let size = ggml_type_size(ggml_type(raw))
    return (1...16).contains(size) ? size : nil
  }

  private static func checkedProduct(_ a: Int, _ b: Int) -> Int? {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? nil : product
  }
}
