/// The structure of a JPEG file, walked marker by marker from SOI to EOI.
///
/// The decoder (stb_image) stops at the first marker it does not expect
/// after the frame header, or at the end of the bytes, and still reports
/// success: the picture it returns is then partly memory it never wrote (a
/// JPEG cut off after its header decodes "fine"). So the whole file is
/// walked here first:
///
/// - before the frame header, only tables, the restart interval, APPn and
///   comments, each segment within the file and well-formed;
/// - one frame header of a kind the decoder reads (baseline, extended or
///   progressive Huffman; `JPEGFrame`);
/// - then segments and scans (each scan header naming frame components,
///   its entropy-coded data skipped byte by byte to the next marker) up to
///   the end-of-image marker, which must be there;
/// - every component in some scan (in a first DC scan when progressive),
///   so that no plane is left as uninitialised memory;
/// - four components only with Adobe's CMYK or YCCK transform, the two the
///   decoder converts to RGB correctly (it reads any other four-component
///   file as YCbCr and drops the fourth plane: wrong colours).
///
/// Bytes after the end-of-image marker are left alone, as the decoder
/// leaves them: cameras append a second picture there (the Multi-Picture
/// Format's preview).
///
/// Every step moves forward by at least two bytes or throws, so the walk
/// ends within the file's length; nothing is allocated beyond four flags.
enum JPEGStructure {
  static func check(_ bytes: ImageBytes) throws(ImageDefect) -> (width: Int, height: Int) {
    var position = 2  // after SOI, which the format was sniffed by
    var frame: JPEGFrame?
    var adobeTransform: Int?
    var covered = [false, false, false, false]
    var scans = 0
    while true {
      let (marker, next) = try readMarker(bytes, at: position)
      switch marker {
      case 0xC0, 0xC1, 0xC2:
        guard frame == nil else { throw .corrupt("a second frame header") }
        let length = try segmentLength(bytes, at: next)
        frame = try JPEGFrame(bytes, at: next, length: length, progressive: marker == 0xC2)
        position = next + length
      case 0xDA:
        guard let frame else { throw .corrupt("a scan before the frame header") }
        let length = try segmentLength(bytes, at: next)
        try scanHeader(bytes, at: next, length: length, frame: frame, covered: &covered)
        position = try entropyCodedEnd(bytes, from: next + length)
        scans += 1
      case 0xDC:
        guard let frame, scans > 0 else { throw .corrupt("a DNL marker before the first scan") }
        guard try segmentLength(bytes, at: next) == 4, try bytes.uint16BE(at: next + 2) == frame.height else {
          throw .corrupt("a DNL marker that does not repeat the height")
        }
        position = next + 4
      case 0xD9:
        guard let frame, scans > 0 else { throw .corrupt("the end-of-image marker before any scan") }
        try checkComplete(frame, covered: covered, adobeTransform: adobeTransform)
        return (frame.width, frame.height)
      case 0xDB, 0xC4, 0xDD, 0xE0...0xEF, 0xFE:
        let length = try segmentLength(bytes, at: next)
        if let transform = try JPEGSegment.check(marker, bytes, at: next, length: length) {
          adobeTransform = transform
        }
        position = next + length
      case 0xC3, 0xC5...0xC7, 0xC9...0xCF:
        // Lossless, hierarchical and arithmetic-coded frames (and the
        // arithmetic conditioning table before one): valid, not decoded.
        guard frame != nil else {
          throw .unsupported("a lossless, hierarchical or arithmetic-coded frame (marker 0xFF\(hex(marker)))")
        }
        throw .corrupt("an unexpected marker 0xFF\(hex(marker)) at byte \(position)")
      default:
        throw .corrupt("an unexpected marker 0xFF\(hex(marker)) at byte \(position)")
      }
    }
  }

  /// The marker at `offset` (0xFF, any fill bytes 0xFF, then the code) and
  /// the offset after it.
  private static func readMarker(_ bytes: ImageBytes, at offset: Int) throws(ImageDefect) -> (Int, Int) {
    guard try bytes.uint8(at: offset) == 0xFF else { throw .corrupt("no marker where one must be, at byte \(offset)") }
    var position = offset + 1
    while try bytes.uint8(at: position) == 0xFF { position += 1 }
    let marker = try bytes.uint8(at: position)
    guard marker != 0 else { throw .corrupt("a stuffed zero where a marker must be, at byte \(offset)") }
    return (marker, position + 1)
  }

  /// The length field at `offset` (it counts itself), at least 2 and within the file.
  private static func segmentLength(_ bytes: ImageBytes, at offset: Int) throws(ImageDefect) -> Int {
    let length = try bytes.uint16BE(at: offset)
    guard length >= 2 else { throw .corrupt("a segment length of \(length) at byte \(offset)") }
    _ = try bytes.end(of: offset, length: length)
    return length
  }

  /// A scan header (SOS): 1...4 components, each one of the frame's, table
  /// numbers 0...3, and a spectral selection the decoder accepts; marks the
  /// components this scan fills.
  private static func scanHeader(
    _ bytes: ImageBytes, at offset: Int, length: Int, frame: JPEGFrame, covered: inout [Bool]
  ) throws(ImageDefect) {
    let count = try bytes.uint8(at: offset + 2)
    guard (1...4).contains(count), count <= frame.components.count, length == 6 + 2 * count else {
      throw .corrupt("a scan header of \(count) components in \(length) bytes")
    }
    var members: [Int] = []
    for index in 0..<count {
      let id = try bytes.uint8(at: offset + 3 + 2 * index)
      guard let member = frame.components.firstIndex(where: { $0.id == id }) else {
        throw .corrupt("a scan names component \(id), which the frame does not have")
      }
      let tables = try bytes.uint8(at: offset + 4 + 2 * index)
      guard tables >> 4 <= 3, tables & 15 <= 3 else { throw .corrupt("a scan names Huffman table \(tables)") }
      members.append(member)
    }
    let selection = offset + 3 + 2 * count
    let (start, end) = (try bytes.uint8(at: selection), try bytes.uint8(at: selection + 1))
    let approximation = try bytes.uint8(at: selection + 2)
    let (high, low) = (approximation >> 4, approximation & 15)
    if frame.progressive {
      // A DC scan (from coefficient 0) holds only coefficient 0; an AC scan
      // one component (what the format allows, and the decoder reads).
      guard start <= end, end <= 63, high <= 13, low <= 13, start == 0 ? end == 0 : count == 1 else {
        throw .corrupt("a progressive scan of coefficients \(start)...\(end) over \(count) components")
      }
      // The first DC scan of a component sets all its coefficients.
      if start == 0 && high == 0 { for member in members { covered[member] = true } }
    } else {
      guard start == 0, approximation == 0 else { throw .corrupt("a baseline scan with progressive fields") }
      for member in members { covered[member] = true }
    }
  }

  /// The offset of the marker that ends the entropy-coded data starting at
  /// `offset`: the first 0xFF not followed by a stuffed zero, a restart
  /// marker or more 0xFF. Throws when the file ends first (no EOI).
  private static func entropyCodedEnd(_ bytes: ImageBytes, from offset: Int) throws(ImageDefect) -> Int {
    var position = offset
    while true {
      guard let lead = bytes.firstIndex(of: 0xFF, from: position) else {
        throw .corrupt("the file ends inside a scan, with no end-of-image marker")
      }
      var code = lead + 1
      while bytes.contains(code, length: 1), try bytes.uint8(at: code) == 0xFF { code += 1 }
      guard bytes.contains(code, length: 1) else {
        throw .corrupt("the file ends inside a scan, with no end-of-image marker")
      }
      let value = try bytes.uint8(at: code)
      if value == 0 || (0xD0...0xD7).contains(value) {
        position = code + 1
        continue
      }
      return lead
    }
  }

  private static func checkComplete(_ frame: JPEGFrame, covered: [Bool], adobeTransform: Int?) throws(ImageDefect) {
    if let missing = frame.components.indices.first(where: { !covered[$0] }) {
      throw .corrupt("component \(frame.components[missing].id) is in no scan, so part of the picture is missing")
    }
    if frame.components.count == 4 && adobeTransform != 0 && adobeTransform != 2 {
      throw .unsupported(
        "four components without Adobe's CMYK or YCCK marker; the decoder would read the colours wrong")
    }
  }

  private static func hex(_ value: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return digits.count < 2 ? "0" + digits : digits
  }
}
