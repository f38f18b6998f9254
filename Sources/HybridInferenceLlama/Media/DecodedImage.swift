import CHybridMTMD
import Foundation
import HybridInferenceCore

/// An image's file, checked and decoded to pixels by libmtmd for one
/// projector: what ``Projector/tokenize(_:decoded:addSpecial:parseSpecial:)``
/// puts where each marker stands.
///
/// The bytes reach a decoder only once ``ImageCheck`` accepted them (format
/// from the magic bytes, a whole file, bounded size): libmtmd's decoder
/// (stb_image) trusts its input. It decodes them through libmtmd's helper,
/// which on bytes stb_image does not read would start ffmpeg; the C side
/// gives it a directory no program can be in, so none ever starts, and
/// bytes that pass the check but do not decode are a typed error, never
/// tried another way.
///
/// `@unchecked Sendable`: the bitmap is written by libmtmd in `init`, only
/// read afterwards (by `mtmd_tokenize`, which copies it), and freed once, in
/// `deinit`.
final class DecodedImage: @unchecked Sendable {
  /// The libmtmd that decoded it.
  let library: MTMDLibrary
  /// libmtmd's bitmap (`mtmd_bitmap *`), named by the bytes' SHA-256.
  let bitmap: OpaquePointer
  /// What the check read from the header.
  let checked: CheckedImage

  /// Checks `data`, declared as `mimeType`, and decodes it for `projector`.
  ///
  /// - Throws: what ``ImageCheck/check(_:mimeType:)`` throws: `invalidAttachment`
  ///   for bytes that are not a whole file of the declared format,
  ///   `unsupportedRequest` for a format, variant or size the device does
  ///   not read; `unsupportedRequest` also when bytes that passed the check
  ///   do not decode (a hybrid lets the cloud judge them).
  init(_ data: Data, mimeType: String, for projector: Projector) throws(HybridInferenceError) {
    checked = try ImageCheck.check(data, mimeType: mimeType)
    let table = projector.library.table
    let errors = MTMDErrorLines()
    let decoded = MTMDErrorLines.$collecting.withValue(errors) {
      data.withUnsafeBytes { buffer in
        CHybridMTMD_bitmap_decode(
          table, projector.context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count)
      }
    }
    guard let decoded else {
      throw .unsupportedRequest(
        "the on-device decoder could not read the \(checked.format.rawValue) image (\(checked.width)×"
          + "\(checked.height)): \(errors.summary ?? "no reason given")")
    }
    library = projector.library
    bitmap = decoded
  }

  deinit {
    CHybridMTMD_bitmap_free(library.table, bitmap)
  }
}
