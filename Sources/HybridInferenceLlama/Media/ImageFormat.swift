/// The image formats the on-device decoder reads: llama.cpp's `libmtmd`
/// decodes images with stb_image, and of its formats the device takes the
/// four that phones, browsers and cameras write (its PSD, TGA, HDR, PIC and
/// PNM readers are left out: no app sends them as photos, and TGA has no
/// signature to recognise it by). GIF is read as its first frame.
enum ImageFormat: String, Sendable, CaseIterable {
  case jpeg = "JPEG"
  case png = "PNG"
  case gif = "GIF"
  case bmp = "BMP"

  /// The format a declared MIME type names (case-insensitive); nil for a
  /// type the device does not read.
  ///
  /// Besides the registered types, the aliases that software writes in
  /// practice are taken: `image/jpg` and `image/pjpeg` (JPEG), `image/x-png`,
  /// `image/x-bmp` and `image/x-ms-bmp`. They name the same bytes, and the
  /// bytes are checked against the format either way.
  init?(mimeType: String) {
    switch mimeType.lowercased() {
    case "image/jpeg", "image/jpg", "image/pjpeg": self = .jpeg
    case "image/png", "image/x-png": self = .png
    case "image/gif": self = .gif
    case "image/bmp", "image/x-bmp", "image/x-ms-bmp": self = .bmp
    default: return nil
    }
  }

  /// What the leading bytes say a file is: one of the formats read here,
  /// another image format (by name), or nothing recognised.
  enum Sniffed: Equatable {
    case readable(ImageFormat)
    case unreadable(String)
    case unknown
  }

  /// The format of `bytes` from its magic bytes alone (never the declared
  /// type): the signature each format starts with.
  static func sniff(_ bytes: ImageBytes) -> Sniffed {
    if bytes.matches([0xFF, 0xD8, 0xFF], at: 0) { return .readable(.jpeg) }
    if bytes.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) { return .readable(.png) }
    if bytes.matches(Array("GIF87a".utf8), at: 0) || bytes.matches(Array("GIF89a".utf8), at: 0) {
      return .readable(.gif)
    }
    if bytes.matches(Array("BM".utf8), at: 0) { return .readable(.bmp) }
    if bytes.matches(Array("RIFF".utf8), at: 0) && bytes.matches(Array("WEBP".utf8), at: 8) {
      return .unreadable("WebP")
    }
    if bytes.matches(Array("ftyp".utf8), at: 4) { return .unreadable("HEIF/AVIF") }
    if bytes.matches([0x49, 0x49, 0x2A, 0x00], at: 0) || bytes.matches([0x4D, 0x4D, 0x00, 0x2A], at: 0) {
      return .unreadable("TIFF")
    }
    if bytes.matches([0xFF, 0x0A], at: 0) || bytes.matches([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20], at: 0) {
      return .unreadable("JPEG XL")
    }
    if bytes.matches([0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20], at: 0) { return .unreadable("JPEG 2000") }
    if bytes.matches(Array("8BPS".utf8), at: 0) { return .unreadable("Photoshop") }
    if bytes.matches([0, 0, 1, 0], at: 0) { return .unreadable("ICO") }
    return .unknown
  }

  /// The check of this format's structure: its width and height, once the
  /// file is known to be whole and of a variant the decoder reads.
  func dimensions(of bytes: ImageBytes) throws(ImageDefect) -> (width: Int, height: Int) {
    switch self {
    case .jpeg: try JPEGStructure.check(bytes)
    case .png: try PNGStructure.check(bytes)
    case .gif: try GIFStructure.check(bytes)
    case .bmp: try BMPStructure.check(bytes)
    }
  }
}
