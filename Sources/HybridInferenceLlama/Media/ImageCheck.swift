import Foundation
import HybridInferenceCore

/// An image whose bytes ``ImageCheck`` accepted: its format and its size
/// in pixels, read from its header.
struct CheckedImage: Equatable, Sendable {
  let format: ImageFormat
  let width: Int
  let height: Int

  /// `width × height`; within ``ImageCheck/maximumPixels``, so it cannot overflow.
  var pixelCount: Int { width * height }
}

/// The check that untrusted image bytes pass before any decoder sees them.
///
/// The device's decoder (stb_image, inside llama.cpp's `libmtmd`) trusts
/// its input: it decodes a JPEG cut off after its header from uninitialised
/// memory, allocates whatever a header declares (an 805-megapixel PNG from a
/// 0.8 MB file takes gigabytes), and `libmtmd` hands bytes it cannot decode
/// to `ffprobe`. So the bytes are read here first, in Swift, with every
/// read bounds-checked, every loop bounded by the file's length and no
/// allocation at all:
///
/// - The format comes from the magic bytes only, and must be the one the
///   declared MIME type names (``ImageFormat/init(mimeType:)``).
/// - The file must be whole: JPEG segments well-formed up to each scan and
///   the end-of-image marker present, PNG chunks within the file from IHDR
///   through IDAT to IEND, the GIF's first frame inside its screen, the
///   bitmap's pixel array inside the file (each format's file says more).
/// - Its width and height, from the header, are at most ``maximumSide``
///   and their product at most ``maximumPixels``.
///
/// What it refuses: a type or format the device does not read (WebP, HEIC,
/// TIFF...), a variant its decoder reads wrongly, or an image over the
/// bounds is `unsupportedRequest`, so a prefer-on-device hybrid hands the
/// request to the cloud, which may read it. Bytes that are not a whole file
/// of the format their MIME type declares (truncated, corrupt, another
/// format) are `invalidAttachment`: no model can be given them.
enum ImageCheck {
  /// The longest side taken, in pixels: 16384, the texture limit of current
  /// GPUs and more than any camera writes; a 100000×1 strip is refused.
  static let maximumSide = 16_384

  /// The most pixels taken: 40 million. The decoder holds the decoded image
  /// as 8-bit RGB (3 bytes a pixel, 120 MB here) and, while it decodes,
  /// intermediates of up to about 20 bytes a pixel (a 16-bit RGBA PNG's
  /// inflated rows and output), so 40 megapixels stays under a gigabyte
  /// beside the model. It takes a 36-megapixel camera's photo; a
  /// 48-megapixel phone shot in full resolution goes to the cloud.
  static let maximumPixels = 40_000_000

  /// The format and size of `data`, an image declared as `mimeType`;
  /// throws when any decoder should not see it (see the type's rules).
  static func check(_ data: Data, mimeType: String) throws(HybridInferenceError) -> CheckedImage {
    guard let declared = ImageFormat(mimeType: mimeType) else {
      throw .unsupportedRequest("the on-device model reads \(readable) images, not \(shown(mimeType))")
    }
    let outcome: Result<CheckedImage, HybridInferenceError> = data.withUnsafeBytes { buffer in
      Result { () throws(HybridInferenceError) -> CheckedImage in
        try check(ImageBytes(buffer), declared: declared, mimeType: shown(mimeType))
      }
    }
    return try outcome.get()
  }

  private static func check(
    _ bytes: ImageBytes, declared: ImageFormat, mimeType: String
  ) throws(HybridInferenceError) -> CheckedImage {
    guard bytes.count > 0 else { throw .invalidAttachment("\(mimeType): no bytes") }
    switch ImageFormat.sniff(bytes) {
    case .readable(let format) where format == declared:
      break
    case .readable(let format):
      throw .invalidAttachment("declared \(mimeType), but the bytes are a \(format.rawValue) image")
    case .unreadable(let name):
      throw .unsupportedRequest(
        "the bytes are in the \(name) format (declared \(mimeType)); the on-device model reads \(readable) images")
    case .unknown:
      throw .invalidAttachment("declared \(mimeType), but the bytes are not a \(declared.rawValue) image")
    }
    let size: (width: Int, height: Int)
    switch Result(catching: { () throws(ImageDefect) in try declared.dimensions(of: bytes) }) {
    case .success(let dimensions):
      size = dimensions
    case .failure(.corrupt(let why)):
      throw .invalidAttachment("\(mimeType): not a whole \(declared.rawValue) file: \(why)")
    case .failure(.unsupported(let why)):
      throw .unsupportedRequest("\(mimeType): the on-device decoder does not read this \(declared.rawValue): \(why)")
    }
    try checkBounds(width: size.width, height: size.height)
    return CheckedImage(format: declared, width: size.width, height: size.height)
  }

  /// Throws `unsupportedRequest` for a side over ``maximumSide`` or more
  /// than ``maximumPixels`` pixels (the product checked for overflow).
  static func checkBounds(width: Int, height: Int) throws(HybridInferenceError) {
    let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
    guard width > maximumSide || height > maximumSide || overflow || pixels > maximumPixels else { return }
    let megapixels = overflow ? "too many" : String(format: "%.1f", Double(pixels) / 1_000_000)
    throw .unsupportedRequest(
      "the image is \(width)×\(height) pixels (\(megapixels) megapixels); the on-device model reads images of "
        + "at most \(maximumSide) pixels a side and \(maximumPixels / 1_000_000) megapixels")
  }

  /// "JPEG, PNG, GIF and BMP".
  private static var readable: String {
    let names = ImageFormat.allCases.map(\.rawValue)
    return names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
  }

  /// The type as written when it is well formed, else a neutral word: a
  /// hand-built transcript can hold any string there.
  private static func shown(_ mimeType: String) -> String {
    MediaType.isWellFormed(mimeType) ? mimeType : "an unknown type"
  }
}
