/// An image as libmtmd takes it: 8-bit red, green and blue for each pixel,
/// row by row from the top, with no padding.
///
/// Decoding a file's bytes into pixels is not libmtmd's job here: its own
/// decoder may start a subprocess (ffmpeg) for bytes it does not recognise,
/// so the library hands it pixels only.
struct RGBImage: Sendable, Equatable {
  /// The largest side accepted: libmtmd resizes every image to its encoder's
  /// size, and a side this long already holds 256 MiB of pixels.
  static let maximumSide = 1 << 14

  let width: Int
  let height: Int
  /// `width * height * 3` bytes.
  let pixels: [UInt8]

  /// nil unless both sides are 1 to ``maximumSide`` and `pixels` holds
  /// exactly `width * height * 3` bytes.
  init?(width: Int, height: Int, pixels: [UInt8]) {
    guard (1...Self.maximumSide).contains(width), (1...Self.maximumSide).contains(height) else { return nil }
    // Cannot overflow: each side is at most 2^14, so the product is at most 3 * 2^28.
    guard pixels.count == width * height * 3 else { return nil }
    self.width = width
    self.height = height
    self.pixels = pixels
  }
}
