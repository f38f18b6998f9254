import Foundation

/// A valid PNG of RGB pixels, written without an image library: 8-bit RGB,
/// no filtering, the image data in zlib's stored (uncompressed) blocks.
///
/// For tests that hand an image to llama.cpp's tools; bounded to small
/// images (a test's, not an app's).
enum TestPNG {
  /// The PNG of `width` x `height` pixels whose colour is `pixel(x, y)`.
  static func encode(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> Data {
    precondition(width > 0 && height > 0 && width <= 4096 && height <= 4096, "a test image, not an app's")
    // Each row: filter type 0 (none), then R, G, B for each pixel.
    var raw = [UInt8]()
    raw.reserveCapacity(height * (1 + width * 3))
    for y in 0..<height {
      raw.append(0)
      for x in 0..<width {
        let (red, green, blue) = pixel(x, y)
        raw += [red, green, blue]
      }
    }
    var header = [UInt8]()
    header += bigEndian(UInt32(width)) + bigEndian(UInt32(height))
    header += [8, 2, 0, 0, 0]  // 8 bits, RGB, deflate, adaptive filtering, no interlace
    var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    png += chunk("IHDR", header)
    png += chunk("IDAT", zlibStored(raw))
    png += chunk("IEND", [])
    return Data(png)
  }

  /// zlib's framing around deflate's stored blocks (at most 65,535 bytes each).
  private static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0x78, 0x01]
    var offset = 0
    repeat {
      let count = min(65_535, bytes.count - offset)
      let isLast = offset + count == bytes.count
      out.append(isLast ? 1 : 0)
      out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
      out += bytes[offset..<offset + count]
      offset += count
    } while offset < bytes.count
    return out + bigEndian(adler32(bytes))
  }

  private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    let typeBytes = Array(type.utf8)
    return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
  }

  private static func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
  }

  /// CRC-32 as PNG (and zip) compute it: reflected, polynomial 0xEDB88320.
  static func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 {
        crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
      }
    }
    return ~crc
  }

  private static func adler32(_ bytes: [UInt8]) -> UInt32 {
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in bytes {
      a = (a + UInt32(byte)) % 65_521
      b = (b + a) % 65_521
    }
    return b << 16 | a
  }
}
