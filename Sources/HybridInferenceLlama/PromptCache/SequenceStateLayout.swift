/// The bytes of one sequence's llama.cpp state as the prompt cache keeps
/// them, and the checks they pass before llama.cpp reads any.
///
/// What this llama.cpp writes for a sequence (`llama_state_seq_get_data`):
/// a 4-byte magic of the memory's kind and the sequence's id, the context's
/// stream count (a stream per sequence, `kv_unified = false`), then per
/// stream a cell count and, for the one stream that holds the sequence,
/// each cell's position, sequence count (1) and sequence id, then every
/// layer's keys and values. A stream count that differs from the loading
/// context's is refused ("n_stream mismatch"), so the cache keeps the magic
/// and the one stream's part, with every sequence id set to 0, and
/// `expanded` writes the id, the stream count and the empty streams of the
/// sequence and context it loads into: a state saved from sequence 2 of a
/// context of four loads into the one sequence of another, and back.
///
/// Why check the cells here: llama.cpp reserves a batch of the cell count
/// and asserts on the positions it reads, so a crafted count or position
/// could abort the process or allocate without bound. The layers' part is
/// checked by llama.cpp itself (types and row sizes against its own, reads
/// bounded by the buffer), with a clean failure. A build that writes another
/// layout (a model with several positions per token, a new llama.cpp) fails
/// `canonical`, and nothing is cached: a miss, never a wrong load.
enum SequenceStateLayout {
  /// The magic and the sequence id.
  static let tagSize = 8
  static let cellSize = 12

  /// The kept form of `raw`, the state of sequence `sequence` of a context of
  /// `streams` streams holding `tokens` cells; nil when it is not laid out so.
  static func canonical(_ raw: [UInt8], sequence: Int, streams: Int, tokens: Int) -> [UInt8]? {
    guard sequence >= 0, sequence < streams, tokens > 0 else { return nil }
    let before = 4 * sequence
    let after = 4 * (streams - sequence - 1)
    let start = tagSize + 4 + before
    guard raw.count > start + after + 4 + tokens * cellSize,
      word(raw, at: 4) == UInt32(sequence), word(raw, at: tagSize) == UInt32(streams),
      (0..<sequence).allSatisfy({ word(raw, at: tagSize + 4 + 4 * $0) == 0 }),
      raw.suffix(after).allSatisfy({ $0 == 0 })
    else { return nil }
    var kept = Array(raw.prefix(4)) + [0, 0, 0, 0] + raw[start..<(raw.count - after)]
    for cell in 0..<tokens {
      let at = tagSize + 4 + cell * cellSize + 8
      kept.replaceSubrange(at..<(at + 4), with: [0, 0, 0, 0])
    }
    return isValid(kept, tokens: tokens, tag: Array(kept.prefix(tagSize))) ? kept : nil
  }

  /// Whether `kept` is the state of exactly `tokens` cells at positions 0...,
  /// of one sequence, with this context's `tag` (the magic and sequence 0,
  /// as an empty sequence 0 of this context writes them).
  static func isValid(_ kept: [UInt8], tokens: Int, tag: [UInt8]) -> Bool {
    let cells = tokens.multipliedReportingOverflow(by: cellSize)
    guard tokens > 0, !cells.overflow, kept.count > tagSize + 4 + cells.partialValue,
      kept.prefix(tagSize).elementsEqual(tag), word(kept, at: tagSize) == UInt32(truncatingIfNeeded: tokens)
    else { return false }
    for cell in 0..<tokens {
      let at = tagSize + 4 + cell * cellSize
      guard word(kept, at: at) == UInt32(truncatingIfNeeded: cell), word(kept, at: at + 4) == 1,
        word(kept, at: at + 8) == 0
      else { return false }
    }
    return true
  }

  /// `kept` as llama.cpp reads it into sequence `sequence` of a context of `streams` streams.
  static func expanded(_ kept: [UInt8], sequence: Int, streams: Int) -> [UInt8] {
    var bytes = Array(kept.prefix(4))
    bytes.reserveCapacity(kept.count + 4 * streams)
    append(UInt32(sequence), to: &bytes)
    append(UInt32(streams), to: &bytes)
    bytes += [UInt8](repeating: 0, count: 4 * sequence)
    bytes += kept.dropFirst(tagSize)
    bytes += [UInt8](repeating: 0, count: 4 * (streams - sequence - 1))
    return bytes
  }

  static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
  }

  /// The little-endian 64-bit word at `offset` (a layer's row size).
  static func word64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
    UInt64(word(bytes, at: offset)) | UInt64(word(bytes, at: offset + 4)) << 32
  }

  static func append(_ value: UInt32, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
  }
}
