/// The contents of the JPEG segments that come between the frame's
/// markers (quantisation and Huffman tables, the restart interval,
/// application data and comments), checked as the decoder reads them: a
/// segment it would read past, or one it would stop at, is refused, so it
/// never decodes on from the middle of a table.
enum JPEGSegment {
  /// Checks the segment of `marker` whose length field is at `offset`
  /// (`length` bytes, already within the file); returns the colour
  /// transform of Adobe's APP14 segment, nil for any other segment.
  static func check(_ marker: Int, _ bytes: ImageBytes, at offset: Int, length: Int) throws(ImageDefect) -> Int? {
    let body = offset + 2
    let size = length - 2
    switch marker {
    case 0xDB: try quantisationTables(bytes, at: body, size: size)
    case 0xC4: try huffmanTables(bytes, at: body, size: size)
    case 0xDD:
      guard length == 4 else { throw .corrupt("a restart interval (DRI) segment of \(length) bytes") }
    case 0xEE:
      // Adobe's APP14: "Adobe\0", version, two flag words, then the transform
      // (0 CMYK, 1 YCbCr, 2 YCCK), which decides how four components are read.
      if size >= 12 && bytes.matches(Array("Adobe".utf8) + [0], at: body) {
        return try bytes.uint8(at: body + 11)
      }
    default:
      break
    }
    return nil
  }

  /// DQT: tables of 64 one- or two-byte values, filling the segment exactly.
  private static func quantisationTables(_ bytes: ImageBytes, at body: Int, size: Int) throws(ImageDefect) {
    var position = body
    var left = size
    while left > 0 {
      let spec = try bytes.uint8(at: position)
      guard spec >> 4 <= 1, spec & 15 <= 3 else { throw .corrupt("a quantisation table of type \(spec)") }
      let tableSize = spec >> 4 == 0 ? 65 : 129
      guard tableSize <= left else { throw .corrupt("a quantisation table longer than its segment") }
      position += tableSize
      left -= tableSize
    }
  }

  /// DHT: a class and number, sixteen code-length counts making a valid
  /// prefix code of at most 256 symbols, then the symbols; filling the
  /// segment exactly.
  private static func huffmanTables(_ bytes: ImageBytes, at body: Int, size: Int) throws(ImageDefect) {
    var position = body
    var left = size
    while left > 0 {
      guard left >= 17 else { throw .corrupt("a Huffman table longer than its segment") }
      let spec = try bytes.uint8(at: position)
      guard spec >> 4 <= 1, spec & 15 <= 3 else { throw .corrupt("a Huffman table of class/number \(spec)") }
      var symbols = 0
      var code = 0
      for length in 1...16 {
        let count = try bytes.uint8(at: position + length)
        symbols += count
        code += count
        // Codes of this length run from the first free one; the last must fit in `length` bits.
        guard count == 0 || code - 1 < 1 << length else { throw .corrupt("Huffman code lengths that overflow") }
        code <<= 1
      }
      guard symbols <= 256 else { throw .corrupt("a Huffman table of \(symbols) symbols") }
      guard 17 + symbols <= left else { throw .corrupt("a Huffman table longer than its segment") }
      position += 17 + symbols
      left -= 17 + symbols
    }
  }
}
