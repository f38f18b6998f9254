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
    var state: [UInt8] = []
    return repeated(oneCell, cells: cells, maximumBytes: maximumBytes, into: &state) ? state : nil
  }

  /// `repeated(_:cells:maximumBytes:)` written into `state`, in place when it
  /// already has the size (the calibration's second context: both layouts of
  /// a model's state, `v_trans` or not, are as long, and a fresh array of
  /// tens of MB pays its page faults again); false, and `state` empty, when
  /// `oneCell` is not laid out so or the result would pass `maximumBytes`.
  static func repeated(_ oneCell: [UInt8], cells: Int, maximumBytes: Int = 512 << 20, into state: inout [UInt8])
    -> Bool
  {
    guard cells > 0, let parsed = OneCell(oneCell) else {
      state = []
      return false
    }
    let (cellBytes, overflow) = parsed.bytesPerCell.multipliedReportingOverflow(by: cells)
    guard !overflow, cellBytes <= maximumBytes else {
      state = []
      return false
    }
    // Fixed parts: the tag, the stream and cell counts, `v_trans` and the layer count, the layers' headers.
    let total = cellBytes + tagSize + 16 + parsed.parts.reduce(0) { $0 + $1.header.count }
    func write(to base: UnsafeMutablePointer<UInt8>) -> Bool {
      var writer = Writer(base: base, capacity: total, source: oneCell)
      writer.copy(0..<tagSize)
      writer.write(1)  // streams
      writer.write(UInt32(clamping: cells))
      for cell in 0..<cells {
        writer.write(UInt32(truncatingIfNeeded: cell))  // position
        writer.write(1)  // sequences holding the cell
        writer.write(0)  // the sequence
      }
      writer.write(parsed.transposedValues ? 1 : 0)
      writer.write(parsed.layerCount)
      for part in parsed.parts {
        writer.copy(part.header)
        if part.transposed {
          for element in stride(from: part.data.lowerBound, to: part.data.upperBound, by: part.elementSize) {
            writer.copy(element..<(element + part.elementSize), times: cells)
          }
        } else {
          writer.copy(part.data, times: cells)
        }
      }
      // `total` counts exactly what the loops above write; anything else is refused.
      return writer.offset == total
    }
    var written = false
    if state.count == total {
      state.withUnsafeMutableBufferPointer { buffer in written = buffer.baseAddress.map(write(to:)) ?? false }
    } else {
      state = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
        initialized = 0
        guard let base = buffer.baseAddress else { return }
        written = write(to: base)
        initialized = written ? total : 0
      }
    }
    if !written { state = [] }
    return written
  }

  /// Writes a state straight into its final buffer: a state of tens of MB
  /// made by appending each part's copies to a growing array would be copied
  /// twice, and appending one element at a time costs seconds in a debug
  /// build.
  ///
  /// Bounded: a write that would pass `capacity` writes nothing and marks
  /// the state short (`offset` past `capacity`), which `repeated` refuses.
  private struct Writer {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    let source: [UInt8]
    var offset = 0

    /// Whether `count` more bytes fit; if not, the writer is spent.
    private mutating func reserve(_ count: Int) -> Bool {
      guard count <= capacity - offset else {
        offset = capacity + 1
        return false
      }
      return true
    }

    mutating func write(_ value: UInt32) {
      guard reserve(4) else { return }
      withUnsafeBytes(of: value.littleEndian) { bytes in
        for byte in bytes {
          base[offset] = byte
          offset += 1
        }
      }
    }

    /// `times` copies of `range` of the source, doubling what is written
    /// with `memcpy` (the source of each doubling, the copies written so
    /// far, never overlaps its destination).
    mutating func copy(_ range: Range<Int>, times: Int = 1) {
      let size = range.count
      let (total, overflow) = size.multipliedReportingOverflow(by: times)
      guard size > 0, times > 0, range.lowerBound >= 0, range.upperBound <= source.count else { return }
      guard !overflow, reserve(total) else { return }
      let destination = base.advanced(by: offset)
      source.withUnsafeBufferPointer { one in
        if let start = one.baseAddress { memcpy(destination, start.advanced(by: range.lowerBound), size) }
      }
      var filled = size
      while filled < total {
        let chunk = min(filled, total - filled)
        memcpy(destination.advanced(by: filled), destination, chunk)
        filled += chunk
      }
      offset += total
    }
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
