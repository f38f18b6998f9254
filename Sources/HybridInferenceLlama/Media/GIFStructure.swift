/// The structure of a GIF file up to the end of its first frame, which is
/// what the decoder reads (as a picture the size of the logical screen).
///
/// - `GIF87a` or `GIF89a`, a logical screen of at least 1×1, the global
///   colour table (when flagged) within the file;
/// - extension blocks before the frame, each sub-block within the file (a
///   graphic control extension of the 4 bytes the decoder reads);
/// - the first image descriptor: a frame of at least 1×1 inside the
///   screen, a colour table (local, or the global one), an LZW minimum
///   code size of 2...8, and its data sub-blocks ending within the file.
///
/// The trailer is not needed: the decoder stops after the first frame.
/// Every block moves the walk forward by at least one byte, so it ends
/// within the file's length.
enum GIFStructure {
  static func check(_ bytes: ImageBytes) throws(ImageDefect) -> (width: Int, height: Int) {
    let width = try bytes.uint16LE(at: 6)
    let height = try bytes.uint16LE(at: 8)
    guard width > 0, height > 0 else { throw .corrupt("a logical screen of \(width)×\(height)") }
    let flags = try bytes.uint8(at: 10)
    let hasGlobalTable = flags & 0x80 != 0
    var position = 13
    if hasGlobalTable { position = try bytes.end(of: position, length: colorTableSize(flags)) }
    while true {
      switch try bytes.uint8(at: position) {
      case 0x21:
        position = try extensionEnd(bytes, at: position)
      case 0x2C:
        try firstFrame(bytes, at: position, screen: (width, height), hasGlobalTable: hasGlobalTable)
        return (width, height)
      case 0x3B:
        throw .corrupt("the trailer comes before any frame")
      case let block:
        throw .corrupt("an unknown block 0x\(String(block, radix: 16)) at byte \(position)")
      }
    }
  }

  /// The bytes of the colour table `flags` announce: 3 × 2^(n+1).
  private static func colorTableSize(_ flags: Int) -> Int { 3 * (2 << (flags & 7)) }

  /// The offset after the extension at `offset` (0x21, a label, sub-blocks, 0).
  private static func extensionEnd(_ bytes: ImageBytes, at offset: Int) throws(ImageDefect) -> Int {
    let label = try bytes.uint8(at: offset + 1)
    if label == 0xF9 {
      // The decoder reads a graphic control block of exactly 4 bytes; any
      // other size derails it.
      guard try bytes.uint8(at: offset + 2) == 4 else { throw .corrupt("a graphic control extension not of 4 bytes") }
    }
    return try subBlocksEnd(bytes, at: offset + 2)
  }

  /// The offset after a run of sub-blocks (a length byte, that many bytes)
  /// ended by an empty one.
  private static func subBlocksEnd(_ bytes: ImageBytes, at offset: Int) throws(ImageDefect) -> Int {
    var position = offset
    while true {
      let length = try bytes.uint8(at: position)
      position += 1
      if length == 0 { return position }
      position = try bytes.end(of: position, length: length)
    }
  }

  /// The image descriptor at `offset`, its colour table and its data.
  private static func firstFrame(
    _ bytes: ImageBytes, at offset: Int, screen: (width: Int, height: Int), hasGlobalTable: Bool
  ) throws(ImageDefect) {
    let left = try bytes.uint16LE(at: offset + 1)
    let top = try bytes.uint16LE(at: offset + 3)
    let width = try bytes.uint16LE(at: offset + 5)
    let height = try bytes.uint16LE(at: offset + 7)
    guard width > 0, height > 0, left + width <= screen.width, top + height <= screen.height else {
      throw .corrupt(
        "the first frame, \(width)×\(height) at (\(left), \(top)), is not inside the \(screen.width)×\(screen.height) screen"
      )
    }
    let flags = try bytes.uint8(at: offset + 9)
    var position = offset + 10
    if flags & 0x80 != 0 {
      position = try bytes.end(of: position, length: colorTableSize(flags))
    } else if !hasGlobalTable {
      throw .corrupt("the first frame has no colour table")
    }
    let codeSize = try bytes.uint8(at: position)
    guard (2...8).contains(codeSize) else { throw .corrupt("an LZW minimum code size of \(codeSize)") }
    _ = try subBlocksEnd(bytes, at: position + 1)
  }
}
