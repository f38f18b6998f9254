/// The structure of a Windows bitmap, read as the decoder reads it.
///
/// - `BM`, then a DIB header of 12 (OS/2), 40, 56, 108 or 124 bytes, the
///   sizes the decoder knows, within the file;
/// - one plane; 1, 4, 8, 16, 24 or 32 bits a pixel (24 in an OS/2 header),
///   uncompressed or (16 and 32 bits) with bit-field masks, each mask set
///   and at most 8 bits wide;
///   run-length and embedded JPEG/PNG compression are `unsupported`;
/// - a width of at least 1; a height other than 0 (negative: rows top
///   down);
/// - the palette of an indexed image (1, 4 and 8 bits) with a colour for
///   every index its depth can hold: the decoder keeps the palette in an
///   uninitialised buffer, so a pixel past a shorter palette would show
///   memory (a short palette is `unsupported`); OS/2 bitmaps with a
///   palette, whose offsets the decoder reads wrong, too;
/// - the pixel array, from the header's offset, within the file (rows
///   padded to four bytes), so the file holds every pixel it declares.
///
/// Fixed offsets only: no loop depends on the input.
enum BMPStructure {
  static func check(_ bytes: ImageBytes) throws(ImageDefect) -> (width: Int, height: Int) {
    let dataOffset = try bytes.uint32LE(at: 10)
    let headerSize = try bytes.uint32LE(at: 14)
    guard [12, 40, 56, 108, 124].contains(headerSize) else {
      throw headerSize < 12
        ? .corrupt("a DIB header of \(headerSize) bytes") : .unsupported("a DIB header of \(headerSize) bytes")
    }
    _ = try bytes.end(of: 14, length: headerSize)
    let os2 = headerSize == 12
    let width = os2 ? try bytes.uint16LE(at: 18) : try bytes.int32LE(at: 18)
    let signedHeight = os2 ? try bytes.uint16LE(at: 20) : try bytes.int32LE(at: 22)
    let planes = try bytes.uint16LE(at: os2 ? 22 : 26)
    let bitsPerPixel = try bytes.uint16LE(at: os2 ? 24 : 28)
    guard planes == 1 else { throw .corrupt("\(planes) planes") }
    guard width > 0, signedHeight != 0, signedHeight != Int(Int32.min) else {
      throw .corrupt("a size of \(width)×\(signedHeight)")
    }
    let height = abs(signedHeight)
    let compression = os2 ? 0 : try bytes.uint32LE(at: 30)
    guard [1, 4, 8, 16, 24, 32].contains(bitsPerPixel) else { throw .corrupt("\(bitsPerPixel) bits a pixel") }
    // OS/2 headers carry no masks, and the decoder has none of its own for them.
    if os2 && bitsPerPixel >= 16 && bitsPerPixel != 24 {
      throw .corrupt("an OS/2 bitmap of \(bitsPerPixel) bits a pixel")
    }
    switch compression {
    case 0: break
    case 3 where bitsPerPixel == 16 || bitsPerPixel == 32: break
    case 3: throw .corrupt("bit-field masks with \(bitsPerPixel) bits a pixel")
    case 1, 2: throw .unsupported("run-length compression")
    default: throw .unsupported("compression method \(compression)")
    }
    // The bytes the decoder has read before the palette or the pixels:
    // the file header, the DIB header, and the masks after a 40- or 56-byte one.
    var headerEnd = 14 + headerSize
    if compression == 3 && (headerSize == 40 || headerSize == 56) { headerEnd += 12 }
    if bitsPerPixel >= 16 {
      try checkMasks(bytes, headerSize: headerSize, compression: compression, bitsPerPixel: bitsPerPixel)
    }
    if bitsPerPixel < 16 {
      guard !os2 else { throw .unsupported("an OS/2 bitmap with a palette") }
      guard dataOffset >= headerEnd else { throw .corrupt("the pixels start inside the header") }
      let entries = (dataOffset - headerEnd) / 4
      guard entries <= 256 else { throw .corrupt("a palette of \(entries) colours") }
      guard entries >= 1 << bitsPerPixel else {
        throw .unsupported(
          "a palette of \(entries) colours for \(bitsPerPixel)-bit indices; "
            + "the decoder would show memory for the indices past it")
      }
    } else {
      // The decoder takes at most 1024 bytes between the header and the pixels.
      guard dataOffset >= headerEnd, dataOffset - headerEnd <= 1024 else {
        throw .corrupt("the pixels start at byte \(dataOffset), outside the \(headerEnd)...\(headerEnd + 1024) allowed")
      }
    }
    try checkPixelArray(bytes, at: dataOffset, width: width, height: height, bitsPerPixel: bitsPerPixel)
    return (width, height)
  }

  /// The colour masks of a 16- or 32-bit bitmap: with bit fields, each of
  /// red, green and blue set, not all equal, and none wider than 8 bits,
  /// as the decoder requires. Without, the decoder uses its own.
  private static func checkMasks(
    _ bytes: ImageBytes, headerSize: Int, compression: Int, bitsPerPixel: Int
  ) throws(ImageDefect) {
    guard compression == 3 else { return }
    // Version 4 and 5 headers hold four masks; after a 40- or 56-byte header
    // the decoder reads three more words as the masks.
    let start = headerSize == 56 ? 70 : 54
    let masks = try (0..<4).map { (index) throws(ImageDefect) -> Int in
      index == 3 && headerSize < 108 ? 0 : try bytes.uint32LE(at: start + 4 * index)
    }
    guard masks[0] != 0, masks[1] != 0, masks[2] != 0, !(masks[0] == masks[1] && masks[1] == masks[2]) else {
      throw .corrupt("colour masks that are empty or all the same")
    }
    guard masks.allSatisfy({ $0.nonzeroBitCount <= 8 }) else { throw .corrupt("a colour mask wider than 8 bits") }
  }

  /// Rows of `bitsPerPixel × width` bits padded to four bytes, `height` of
  /// them, from `offset`: within the file (overflow-checked).
  private static func checkPixelArray(
    _ bytes: ImageBytes, at offset: Int, width: Int, height: Int, bitsPerPixel: Int
  ) throws(ImageDefect) {
    let (rowBits, overflow) = width.multipliedReportingOverflow(by: bitsPerPixel)
    let rowBytes = (rowBits + 31) / 32 * 4
    let (size, overflow2) = rowBytes.multipliedReportingOverflow(by: height)
    guard !overflow, !overflow2, bytes.contains(offset, length: size) else {
      throw .corrupt("the pixel array (\(width)×\(height), \(bitsPerPixel) bits a pixel) runs past the end of the file")
    }
  }
}
