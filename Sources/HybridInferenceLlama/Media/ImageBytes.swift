/// Bounds-checked reads of an image's bytes for ``ImageCheck``.
///
/// Every read checks its offset and length against the buffer, with
/// overflow-checked arithmetic, and throws `ImageDefect.truncated` past the
/// end, so a header field can never move a read outside the file. The view
/// borrows the buffer of `Data.withUnsafeBytes` and must not outlive it; it
/// is used only inside that closure.
struct ImageBytes {
  private let buffer: UnsafeRawBufferPointer

  init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

  /// The number of bytes.
  var count: Int { buffer.count }

  /// `offset + length`, refusing an overflow or a result past the end.
  func end(of offset: Int, length: Int) throws(ImageDefect) -> Int {
    let (sum, overflow) = offset.addingReportingOverflow(length)
    guard !overflow, offset >= 0, length >= 0, sum <= buffer.count else { throw .truncated }
    return sum
  }

  /// Whether `offset + length` lies within the bytes.
  func contains(_ offset: Int, length: Int) -> Bool {
    (try? end(of: offset, length: length)) != nil
  }

  func uint8(at offset: Int) throws(ImageDefect) -> Int {
    _ = try end(of: offset, length: 1)
    return Int(buffer[offset])
  }

  func uint16BE(at offset: Int) throws(ImageDefect) -> Int {
    _ = try end(of: offset, length: 2)
    return Int(buffer[offset]) << 8 | Int(buffer[offset + 1])
  }

  func uint32BE(at offset: Int) throws(ImageDefect) -> Int {
    _ = try end(of: offset, length: 4)
    return (0..<4).reduce(0) { $0 << 8 | Int(buffer[offset + $1]) }
  }

  func uint16LE(at offset: Int) throws(ImageDefect) -> Int {
    _ = try end(of: offset, length: 2)
    return Int(buffer[offset]) | Int(buffer[offset + 1]) << 8
  }

  func uint32LE(at offset: Int) throws(ImageDefect) -> Int {
    _ = try end(of: offset, length: 4)
    return (0..<4).reversed().reduce(0) { $0 << 8 | Int(buffer[offset + $1]) }
  }

  /// A little-endian two's-complement 32-bit value (a bitmap's signed height).
  func int32LE(at offset: Int) throws(ImageDefect) -> Int {
    Int(Int32(truncatingIfNeeded: UInt32(try uint32LE(at: offset))))
  }

  /// Whether the bytes at `offset` are `expected` (false when they run past the end).
  func matches(_ expected: [UInt8], at offset: Int) -> Bool {
    guard contains(offset, length: expected.count) else { return false }
    return expected.indices.allSatisfy { buffer[offset + $0] == expected[$0] }
  }

  /// The first index at or after `offset` holding `byte`; nil when there is none.
  func firstIndex(of byte: UInt8, from offset: Int) -> Int? {
    guard offset >= 0, offset < buffer.count else { return nil }
    var index = offset
    while index < buffer.count {
      if buffer[index] == byte { return index }
      index += 1
    }
    return nil
  }
}
