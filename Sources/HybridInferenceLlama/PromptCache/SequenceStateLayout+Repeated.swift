import Foundation

/// A sequence state of many cells made from the state of one: what the
/// attention calibration (`AttentionStepCalibration`) loads to time a decode
/// step at depth without decoding the depth first (1,024 tokens of prefill
/// are over half a second on 2 cores; copying one cell's K and V 1,024 times
/// is a few milliseconds).
///
/// The layout read and written is the one `SequenceStateLayout` describes,
/// for a context of one stream: the tag, the stream count (1), the cell
/// count, each cell's position, sequence count (1) and sequence id (0), then
/// `v_trans` and the layer count, every layer's K (type, row size, a row per
/// cell), then every layer that has V: a row per cell, or with `v_trans` (no
/// flash attention) the element size, the width, and per dimension an
/// element per cell. Anything else (cells with extra data, two caches of a
/// sliding-window model, a recurrent state, a new llama.cpp) does not parse
/// to the last byte, and gives nil: the calibration then measures another way.
extension SequenceStateLayout {
  /// The state of `cells` cells at positions 0..<`cells`, each holding the K
  /// and V of the single cell of `oneCell` (the state of a one-stream context
  /// after one token at position 0); nil when `oneCell` is not laid out so,
  /// or the result would pass `maximumBytes`.
  static func repeated(_ oneCell: [UInt8], cells: Int, maximumBytes: Int = 512 << 20) -> [UInt8]? {
    guard cells > 0, let parsed = OneCell(oneCell) else { return nil }
    let (cellBytes, overflow) = parsed.bytesPerCell.multipliedReportingOverflow(by: cells)
    guard !overflow, cellBytes <= maximumBytes else { return nil }
    var bytes = Array(oneCell.prefix(tagSize))
    bytes.reserveCapacity(cellBytes + oneCell.count)
    append(1, to: &bytes)  // streams
    append(UInt32(clamping: cells), to: &bytes)
    for cell in 0..<cells {
      append(UInt32(truncatingIfNeeded: cell), to: &bytes)  // position
      append(1, to: &bytes)  // sequences holding the cell
      append(0, to: &bytes)  // the sequence
    }
    append(parsed.transposedValues ? 1 : 0, to: &bytes)
    append(parsed.layerCount, to: &bytes)
    for part in parsed.parts {
      bytes += oneCell[part.header]
      if part.transposed {
        for element in stride(from: part.data.lowerBound, to: part.data.upperBound, by: part.elementSize) {
          appendRepeated(oneCell[element..<(element + part.elementSize)], count: cells, to: &bytes)
        }
      } else {
        appendRepeated(oneCell[part.data], count: cells, to: &bytes)
      }
    }
    return bytes
  }

  /// Appends `count` copies of `pattern`, doubling what is written with
  /// `memcpy`: a V column of 3,072 two-byte elements appended one at a time
  /// made the calibration's 77 MB state in 0.6 s on 2 cores (and in 30 s in
  /// a debug build, where every generic append goes element by element).
  private static func appendRepeated(_ pattern: ArraySlice<UInt8>, count: Int, to bytes: inout [UInt8]) {
    let size = pattern.count
    let total = size * count  // bounded by `repeated`'s overflow check
    guard total > 0 else { return }
    let copies = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
      initialized = 0
      guard let base = buffer.baseAddress else { return }
      pattern.withUnsafeBufferPointer { one in
        if let source = one.baseAddress { memcpy(base, source, size) }
      }
      var filled = size
      while filled < total {
        let chunk = min(filled, total - filled)
        // The source (the first `chunk` bytes) and the destination do not overlap: chunk <= filled.
        memcpy(base.advanced(by: filled), base, chunk)
        filled += chunk
      }
      initialized = total
    }
    bytes += copies
  }

  /// One cell's state, parsed into its layers' parts.
  private struct OneCell {
    /// One layer's K or V: its header's bytes and its one cell's data.
    struct Part {
      var header: Range<Int>
      var data: Range<Int>
      var transposed: Bool
      var elementSize: Int
    }

    var transposedValues: Bool
    var layerCount: UInt32
    var parts: [Part] = []
    var bytesPerCell: Int { 12 + parts.reduce(0) { $0 + $1.data.count } }

    init?(_ bytes: [UInt8]) {
      let cellsStart = SequenceStateLayout.tagSize + 8
      guard bytes.count > cellsStart + 20, SequenceStateLayout.word(bytes, at: SequenceStateLayout.tagSize) == 1,
        SequenceStateLayout.word(bytes, at: SequenceStateLayout.tagSize + 4) == 1,
        SequenceStateLayout.word(bytes, at: cellsStart) == 0, SequenceStateLayout.word(bytes, at: cellsStart + 4) == 1,
        SequenceStateLayout.word(bytes, at: cellsStart + 8) == 0
      else { return nil }
      var offset = cellsStart + 12
      let transposed = SequenceStateLayout.word(bytes, at: offset)
      let layers = SequenceStateLayout.word(bytes, at: offset + 4)
      guard transposed <= 1, (1...4096).contains(layers) else { return nil }
      (transposedValues, layerCount, offset) = (transposed == 1, layers, offset + 8)
      // K: a type and a row size (8 bytes) per layer, then the row.
      for _ in 0..<layers {
        guard let part = Self.row(bytes, at: offset) else { return nil }
        parts.append(part)
        offset = part.data.upperBound
      }
      // V: for the layers that have it, until the last byte.
      var values = 0
      while offset < bytes.count {
        guard values < layers,
          let part = transposedValues ? Self.columns(bytes, at: offset) : Self.row(bytes, at: offset)
        else { return nil }
        parts.append(part)
        (offset, values) = (part.data.upperBound, values + 1)
      }
      guard offset == bytes.count else { return nil }
    }

    /// A type (4 bytes), a row size (8), and one row of that size.
    private static func row(_ bytes: [UInt8], at offset: Int) -> Part? {
      guard bytes.count - offset >= 12 else { return nil }
      let size = word64(bytes, at: offset + 4)
      guard size > 0, size <= UInt64(bytes.count - offset - 12) else { return nil }
      let start = offset + 12
      return Part(header: offset..<start, data: start..<(start + Int(size)), transposed: false, elementSize: Int(size))
    }

    /// A type (4 bytes), an element size (4), a width (4), and an element per dimension.
    private static func columns(_ bytes: [UInt8], at offset: Int) -> Part? {
      guard bytes.count - offset >= 12 else { return nil }
      let element = Int(word(bytes, at: offset + 4))
      let width = Int(word(bytes, at: offset + 8))
      let (size, overflow) = element.multipliedReportingOverflow(by: width)
      guard (1...16).contains(element), width > 0, !overflow, size <= bytes.count - offset - 12 else { return nil }
      let start = offset + 12
      return Part(header: offset..<start, data: start..<(start + size), transposed: true, elementSize: element)
    }

  }
}
