/// The structure of a PNG file, walked chunk by chunk without inflating
/// anything.
///
/// - the signature, then IHDR first: a width and height of 1...2³¹−1, a
///   bit depth and colour type the format allows together (16-bit is
///   taken: the decoder reduces it to 8 bits correctly), compression and
///   filter method 0, no or Adam7 interlacing;
/// - every chunk's length within the file, its type four ASCII letters;
///   no second IHDR, PLTE and tRNS where the format allows them, no critical
///   chunk the decoder does not know (Apple's CgBI variant included);
/// - at least one IDAT, and IEND, which ends the walk (bytes after it are
///   left alone, as the decoder leaves them).
///
/// A palette image must have a colour for every index its bit depth can
/// hold (2, 4, 16 or 256): the decoder keeps its palette in an
/// uninitialised buffer, so a pixel past a shorter palette would show
/// memory. Without inflating the data that cannot be ruled out otherwise,
/// so a short palette is `unsupported` (the cloud reads it).
///
/// CRCs are not checked: the decoder ignores them, and a wrong one cannot
/// mislead it. Every chunk moves the walk forward by at least twelve bytes,
/// so it ends within the file's length.
enum PNGStructure {
  static func check(_ bytes: ImageBytes) throws(ImageDefect) -> (width: Int, height: Int) {
    let header = try headerChunk(bytes)
    var position = 8 + 12 + 13
    var paletteSize: Int?
    var sawData = false
    var sawTransparency = false
    while true {
      guard bytes.contains(position, length: 12) else { throw .corrupt("the file ends before IEND (truncated)") }
      let length = try bytes.uint32BE(at: position)
      let type = try chunkType(bytes, at: position + 4)
      guard length <= Int(Int32.max), bytes.contains(position + 12, length: length) else {
        throw .corrupt("the \(type) chunk at byte \(position) runs past the end of the file")
      }
      switch type {
      case "IHDR":
        throw .corrupt("a second IHDR chunk")
      case "PLTE":
        guard paletteSize == nil, !sawData, header.colorType != 0, header.colorType != 4 else {
          throw .corrupt("a PLTE chunk where the format allows none")
        }
        guard length > 0, length % 3 == 0, length <= 3 * 256 else { throw .corrupt("a PLTE chunk of \(length) bytes") }
        paletteSize = length / 3
      case "tRNS":
        try checkTransparency(header, length: length, paletteSize: paletteSize, afterData: sawData)
        guard !sawTransparency else { throw .corrupt("a second tRNS chunk") }
        sawTransparency = true
      case "IDAT":
        if header.colorType == 3 {
          guard let paletteSize else { throw .corrupt("a palette image without a PLTE chunk before its data") }
          guard paletteSize >= 1 << header.bitDepth else {
            throw .unsupported(
              "a palette of \(paletteSize) colours for \(header.bitDepth)-bit indices; "
                + "the decoder would show memory for the indices past it")
          }
        }
        sawData = true
      case "IEND":
        guard sawData else { throw .corrupt("no IDAT chunk before IEND") }
        guard length == 0 else { throw .corrupt("an IEND chunk of \(length) bytes") }
        return (header.width, header.height)
      case "CgBI":
        throw .unsupported("Apple's CgBI variant")
      default:
        // The case of the first letter marks a critical chunk, which a decoder must know.
        guard try bytes.uint8(at: position + 4) & 0x20 != 0 else {
          throw .unsupported("a critical chunk \(type) the decoder does not know")
        }
      }
      position = try bytes.end(of: position + 12, length: length)
    }
  }

  /// IHDR's fields.
  struct Header {
    let width: Int
    let height: Int
    let bitDepth: Int
    let colorType: Int
  }

  /// The IHDR chunk, which must come first, with the combinations of bit
  /// depth and colour type the format defines.
  private static func headerChunk(_ bytes: ImageBytes) throws(ImageDefect) -> Header {
    guard bytes.contains(8, length: 12 + 13) else { throw .corrupt("the file ends inside IHDR (truncated)") }
    guard try bytes.uint32BE(at: 8) == 13, bytes.matches(Array("IHDR".utf8), at: 12) else {
      throw .corrupt("the first chunk is not a 13-byte IHDR")
    }
    let width = try bytes.uint32BE(at: 16)
    let height = try bytes.uint32BE(at: 20)
    guard (1...Int(Int32.max)).contains(width), (1...Int(Int32.max)).contains(height) else {
      throw .corrupt("a size of \(width)×\(height)")
    }
    let bitDepth = try bytes.uint8(at: 24)
    let colorType = try bytes.uint8(at: 25)
    let allowed: [Int: Set<Int>] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
    guard allowed[colorType]?.contains(bitDepth) == true else {
      throw .corrupt("colour type \(colorType) with bit depth \(bitDepth)")
    }
    guard try bytes.uint8(at: 26) == 0, try bytes.uint8(at: 27) == 0 else {
      throw .corrupt("a compression or filter method other than 0")
    }
    guard try bytes.uint8(at: 28) <= 1 else { throw .corrupt("an interlace method other than none or Adam7") }
    return Header(width: width, height: height, bitDepth: bitDepth, colorType: colorType)
  }

  /// tRNS: before the data; for a palette, after PLTE and no longer than it;
  /// a grey or RGB key of 2 or 6 bytes; none for types with alpha.
  private static func checkTransparency(
    _ header: Header, length: Int, paletteSize: Int?, afterData: Bool
  ) throws(ImageDefect) {
    guard !afterData else { throw .corrupt("a tRNS chunk after the image data") }
    switch header.colorType {
    case 3:
      guard let paletteSize, length <= paletteSize else { throw .corrupt("a tRNS chunk longer than the palette") }
    case 0, 2:
      guard length == (header.colorType == 0 ? 2 : 6) else { throw .corrupt("a tRNS chunk of \(length) bytes") }
    default:
      throw .corrupt("a tRNS chunk in an image with an alpha channel")
    }
  }

  /// The chunk type at `offset`: four ASCII letters.
  private static func chunkType(_ bytes: ImageBytes, at offset: Int) throws(ImageDefect) -> String {
    var type = ""
    for index in 0..<4 {
      let byte = try bytes.uint8(at: offset + index)
      guard (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) else {
        throw .corrupt("a chunk type that is not four letters, at byte \(offset)")
      }
      type.unicodeScalars.append(Unicode.Scalar(UInt8(byte)))
    }
    return type
  }
}
