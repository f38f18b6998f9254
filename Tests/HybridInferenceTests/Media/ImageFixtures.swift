import Foundation

/// Small images of each format the device reads, built byte by byte so that
/// every field is visible and can be bent: PNGs with a stored (uncompressed)
/// deflate block and real CRCs, baseline JPEGs whose every block is a zero
/// DC difference and an end-of-block (one one-bit code each), one-frame
/// GIFs, uncompressed bitmaps. All decode with stb_image as they are.
enum ImageFixtures {
  // MARK: PNG

  /// A PNG of `width`×`height` (its IDAT holds one row of pixels at most, so
  /// large sizes stay small), with `chunks` inserted after IHDR.
  static func png(
    width: Int, height: Int, bitDepth: UInt8 = 8, colorType: UInt8 = 2, interlace: UInt8 = 0,
    before data: [(String, [UInt8])] = [], idat: Bool = true, iend: Bool = true
  ) -> Data {
    var header = be32(width) + be32(height)
    header += [bitDepth, colorType, 0, 0, interlace]
    var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    bytes += chunk("IHDR", header)
    for (type, body) in data { bytes += chunk(type, body) }
    if idat {
      let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colorType)] ?? 1
      let rowBytes = (min(width, 64) * channels * Int(bitDepth) + 7) / 8
      let raw = (0..<min(height, 64)).flatMap { _ in [0] + [UInt8](repeating: 0x7F, count: rowBytes) }
      bytes += chunk("IDAT", zlibStored(raw))
    }
    if iend { bytes += chunk("IEND", []) }
    return Data(bytes)
  }

  /// A chunk: length, type, body, CRC-32 of type and body.
  static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
    let typed = Array(type.utf8) + body
    return be32(body.count) + typed + be32(Int(crc32(typed)))
  }

  /// A zlib stream of one stored deflate block (at most 65535 bytes).
  static func zlibStored(_ raw: [UInt8]) -> [UInt8] {
    let length = raw.count
    var bytes: [UInt8] = [0x78, 0x01, 0x01, UInt8(length & 0xFF), UInt8(length >> 8)]
    bytes += [UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
    bytes += raw
    var (a, b) = (1, 0)
    for byte in raw {
      a = (a + Int(byte)) % 65521
      b = (b + a) % 65521
    }
    return bytes + be32(b << 16 | a)
  }

  static func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
  }

  // MARK: JPEG

  /// A baseline (or, `sof: 0xC2`, progressive-marked) JPEG of
  /// `width`×`height` with `components` components (ids 1, 2, 3, 4,
  /// sampling 1×1), `extra` segments before the frame, and one interleaved
  /// scan over `scanned` of them (all by default) with `selection` (the
  /// spectral start and end, the successive approximation byte).
  static func jpeg(
    width: Int, height: Int, components: Int = 1, sof: UInt8 = 0xC0, precision: UInt8 = 8,
    extra: [[UInt8]] = [], scanned: [Int]? = nil, selection: [UInt8] = [0, 63, 0], eoi: Bool = true
  ) -> Data {
    var bytes: [UInt8] = [0xFF, 0xD8]
    for segment in extra { bytes += segment }
    bytes += segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
    var frame: [UInt8] = [precision] + be16(height) + be16(width) + [UInt8(components)]
    for id in 1...components { frame += [UInt8(id), 0x11, 0] }
    bytes += segment(sof, frame)
    // One symbol each: DC category 0 and AC end-of-block, both the code "0".
    bytes += segment(0xC4, [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0x00])
    bytes += segment(0xC4, [0x10, 1] + [UInt8](repeating: 0, count: 15) + [0x00])
    let ids = scanned ?? Array(1...components)
    var scan: [UInt8] = [UInt8(ids.count)]
    for id in ids { scan += [UInt8(id), 0x00] }
    bytes += segment(0xDA, scan + selection)
    // Two bits a block, zero; the last byte padded with ones. At most 4 KB:
    // a huge image's missing blocks read as zero bits, the same blocks.
    let blocks = (width + 7) / 8 * ((height + 7) / 8) * ids.count
    var data = [UInt8](repeating: 0, count: min(blocks * 2 / 8, 4096))
    if blocks * 2 % 8 != 0 && data.count < 4096 { data.append(0xFF >> (blocks * 2 % 8)) }
    bytes += data
    if eoi { bytes += [0xFF, 0xD9] }
    return Data(bytes)
  }

  /// A marker segment: 0xFF, the marker, the length (counting itself), the body.
  static func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
    [0xFF, marker] + be16(body.count + 2) + body
  }

  /// Adobe's APP14 segment with colour transform `transform` (0 CMYK, 2 YCCK):
  /// "Adobe", version 100 (two bytes), two flag words, the transform.
  static func adobe(transform: UInt8) -> [UInt8] {
    segment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, transform])
  }

  // MARK: GIF

  /// A GIF89a with a `screen` logical screen, a two-colour global table and
  /// one frame of `frame` at `origin` (its LZW data is one pixel of colour 0).
  static func gif(
    screen: (Int, Int), frame: (Int, Int)? = nil, origin: (Int, Int) = (0, 0), extensions: [[UInt8]] = [],
    trailer: Bool = true
  ) -> Data {
    let frame = frame ?? screen
    var bytes = Array("GIF89a".utf8) + le16(screen.0) + le16(screen.1) + [0x80, 0, 0]
    bytes += [0, 0, 0, 0xFF, 0xFF, 0xFF]
    for block in extensions { bytes += block }
    bytes += [0x2C] + le16(origin.0) + le16(origin.1) + le16(frame.0) + le16(frame.1) + [0]
    bytes += [2, 2, 0x44, 0x01, 0]
    if trailer { bytes.append(0x3B) }
    return Data(bytes)
  }

  // MARK: BMP

  /// A bitmap of `width`×`height` (negative: top-down) at `bitsPerPixel`,
  /// with a BITMAPINFOHEADER, `paletteEntries` colours, and its pixel rows.
  static func bmp(
    width: Int, height: Int, bitsPerPixel: Int = 24, compression: Int = 0, paletteEntries: Int? = nil,
    dropping: Int = 0
  ) -> Data {
    let entries = paletteEntries ?? (bitsPerPixel < 16 ? 1 << bitsPerPixel : 0)
    let offset = 14 + 40 + 4 * entries
    let rowBytes = (width * bitsPerPixel + 31) / 32 * 4
    let pixels = rowBytes * abs(height)
    var bytes = Array("BM".utf8) + le32(offset + pixels) + [0, 0, 0, 0] + le32(offset)
    bytes += le32(40) + le32(width) + le32(height) + le16(1) + le16(bitsPerPixel) + le32(compression)
    bytes += le32(pixels) + le32(2835) + le32(2835) + le32(entries) + le32(0)
    for index in 0..<entries { bytes += [UInt8(index & 0xFF), UInt8(index & 0xFF), UInt8(index & 0xFF), 0] }
    bytes += [UInt8](repeating: 0x40, count: pixels)
    return Data(bytes.dropLast(dropping))
  }

  // MARK: Integers

  static func be16(_ value: Int) -> [UInt8] { [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }
  static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
  static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
  static func le32(_ value: Int) -> [UInt8] { le16(value) + le16(value >> 16) }
}
