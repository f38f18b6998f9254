import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// libFuzzer target: the image check that runs before the device's decoder
/// sees image bytes, `ImageCheck.check(_:mimeType:)`.
///
/// Each input is checked as each of the four types the device reads, so a
/// mutated image reaches its own format's walk and the mismatch path both.
/// `invalidAttachment` and `unsupportedRequest` are the expected outcomes of
/// garbage; a trap, an overflow or an ASan report is a finding, and so is an
/// accepted image outside the bounds, of another format than its type, or
/// accepted under two types.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImage(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  var acceptedAs: [String] = []
  for mimeType in ["image/jpeg", "image/png", "image/gif", "image/bmp"] {
    switch Result(catching: { () throws(HybridInferenceError) in try ImageCheck.check(data, mimeType: mimeType) }) {
    case .success(let image):
      guard image.format == ImageFormat(mimeType: mimeType) else { fatalError("\(image) accepted as \(mimeType)") }
      guard (1...ImageCheck.maximumSide).contains(image.width), (1...ImageCheck.maximumSide).contains(image.height),
        image.pixelCount <= ImageCheck.maximumPixels
      else { fatalError("\(image) accepted outside the bounds") }
      acceptedAs.append(mimeType)
    case .failure(.invalidAttachment), .failure(.unsupportedRequest):
      break
    case .failure(let error):
      fatalError("unexpected error \(error)")
    }
  }
  if acceptedAs.count > 1 { fatalError("accepted as \(acceptedAs)") }
  return 0
}
