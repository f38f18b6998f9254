import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// The check image bytes pass before the device's decoder (stb_image) sees
/// them: the format from the magic bytes and agreeing with the MIME type,
/// the file whole, the size within the bounds. Every image is built in
/// `ImageFixtures`; each refused one here is one stb_image decodes anyway
/// (from memory it never wrote, or into gigabytes).
final class ImageCheckTests: XCTestCase {
  private func accepted(
    _ data: Data, _ mimeType: String, file: StaticString = #filePath, line: UInt = #line
  ) -> CheckedImage? {
    do {
      return try ImageCheck.check(data, mimeType: mimeType)
    } catch {
      XCTFail("refused: \(error)", file: file, line: line)
      return nil
    }
  }

  /// The reason of the error the check throws, when it is `invalidAttachment`.
  private func invalid(
    _ data: Data, _ mimeType: String, file: StaticString = #filePath, line: UInt = #line
  ) -> String {
    switch Result(catching: { () throws(HybridInferenceError) in try ImageCheck.check(data, mimeType: mimeType) }) {
    case .failure(.invalidAttachment(let why)): return why
    case let other:
      XCTFail("expected invalidAttachment, got \(other)", file: file, line: line)
      return ""
    }
  }

  /// The reason of the error the check throws, when it is `unsupportedRequest`.
  private func unsupported(
    _ data: Data, _ mimeType: String, file: StaticString = #filePath, line: UInt = #line
  ) -> String {
    switch Result(catching: { () throws(HybridInferenceError) in try ImageCheck.check(data, mimeType: mimeType) }) {
    case .failure(.unsupportedRequest(let why)): return why
    case let other:
      XCTFail("expected unsupportedRequest, got \(other)", file: file, line: line)
      return ""
    }
  }

  func testEachFormat_accepted_withItsSizeFromTheHeader() {
    let cases: [(Data, String, ImageFormat, Int, Int)] = [
      (ImageFixtures.png(width: 3, height: 2), "image/png", .png, 3, 2),
      (ImageFixtures.jpeg(width: 16, height: 8), "image/jpeg", .jpeg, 16, 8),
      (ImageFixtures.jpeg(width: 9, height: 9, components: 3), "image/jpeg", .jpeg, 9, 9),
      (ImageFixtures.gif(screen: (3, 2), frame: (1, 1)), "image/gif", .gif, 3, 2),
      (ImageFixtures.bmp(width: 3, height: 2), "image/bmp", .bmp, 3, 2),
      (ImageFixtures.bmp(width: 3, height: -2), "image/bmp", .bmp, 3, 2),
      (ImageFixtures.bmp(width: 5, height: 1, bitsPerPixel: 8), "image/bmp", .bmp, 5, 1),
      (ImageFixtures.bmp(width: 9, height: 3, bitsPerPixel: 1), "image/bmp", .bmp, 9, 3),
    ]
    for (data, mimeType, format, width, height) in cases {
      let image = accepted(data, mimeType)
      XCTAssertEqual(image, CheckedImage(format: format, width: width, height: height), mimeType)
      XCTAssertEqual(image?.pixelCount, width * height)
    }
  }

  func testOnePixel_accepted_inEveryFormat() {
    XCTAssertEqual(accepted(ImageFixtures.png(width: 1, height: 1), "image/png")?.pixelCount, 1)
    XCTAssertEqual(accepted(ImageFixtures.jpeg(width: 1, height: 1), "image/jpeg")?.pixelCount, 1)
    XCTAssertEqual(accepted(ImageFixtures.gif(screen: (1, 1)), "image/gif")?.pixelCount, 1)
    XCTAssertEqual(accepted(ImageFixtures.bmp(width: 1, height: 1), "image/bmp")?.pixelCount, 1)
  }

  func testJPEGCutShort_refused_wherever_itIsCut() {
    let whole = ImageFixtures.jpeg(width: 64, height: 64, components: 3)
    XCTAssertNotNil(accepted(whole, "image/jpeg"))
    // Cut right after the header (before the scan), stb_image returns a
    // picture of memory it never wrote.
    let scan = whole.firstRange(of: Data([0xFF, 0xDA]))?.lowerBound ?? 0
    XCTAssertTrue(invalid(whole.prefix(scan), "image/jpeg").contains("not a whole JPEG file"))
    for length in 0..<whole.count {
      _ = invalid(whole.prefix(length), "image/jpeg")
    }
    XCTAssertTrue(
      invalid(ImageFixtures.jpeg(width: 8, height: 8, eoi: false), "image/jpeg").contains("no end-of-image marker"))
  }

  func testEveryOtherFormatCutShort_refused() {
    let png = ImageFixtures.png(width: 4, height: 4)
    for length in 0..<png.count { _ = invalid(png.prefix(length), "image/png") }
    let bmp = ImageFixtures.bmp(width: 4, height: 4)
    for length in 0..<bmp.count { _ = invalid(bmp.prefix(length), "image/bmp") }
    // A GIF is read up to the end of its first frame; the trailer may go.
    let gif = ImageFixtures.gif(screen: (4, 4), trailer: false)
    XCTAssertNotNil(accepted(gif, "image/gif"))
    for length in 0..<gif.count { _ = invalid(gif.prefix(length), "image/gif") }
  }

  func testHugeHeaders_refused_withTheBound_beforeAnyDecoding() {
    // 805 megapixels declared by a PNG of a few dozen bytes.
    let bomb = unsupported(ImageFixtures.png(width: 28_377, height: 28_377), "image/png")
    XCTAssertTrue(bomb.contains("28377×28377"), bomb)
    XCTAssertTrue(bomb.contains("805.3 megapixels"), bomb)
    XCTAssertTrue(bomb.contains("at most 16384 pixels a side and 40 megapixels"), bomb)
    // A side over the bound, then the pixel count over it with both sides within.
    XCTAssertTrue(unsupported(ImageFixtures.png(width: 100_000, height: 1), "image/png").contains("100000×1"))
    XCTAssertTrue(unsupported(ImageFixtures.png(width: 1, height: 16_385), "image/png").contains("1×16385"))
    XCTAssertTrue(unsupported(ImageFixtures.png(width: 8_000, height: 6_000), "image/png").contains("48.0 megapixels"))
    XCTAssertTrue(
      unsupported(ImageFixtures.jpeg(width: 65_535, height: 65_535), "image/jpeg").contains("65535×65535"))
    XCTAssertTrue(
      unsupported(ImageFixtures.gif(screen: (20_000, 2), frame: (1, 1)), "image/gif").contains("20000×2"))
    // At the bounds: taken.
    XCTAssertNotNil(accepted(ImageFixtures.png(width: 16_384, height: 1), "image/png"))
    XCTAssertNotNil(accepted(ImageFixtures.png(width: 16_384, height: 2_441), "image/png"))
    XCTAssertEqual(ImageCheck.maximumPixels, 40_000_000)
    XCTAssertEqual(ImageCheck.maximumSide, 16_384)
  }

  func testZeroSizes_refused() {
    XCTAssertTrue(invalid(ImageFixtures.png(width: 0, height: 5), "image/png").contains("0×5"))
    XCTAssertTrue(invalid(ImageFixtures.jpeg(width: 0, height: 8), "image/jpeg").contains("a width of 0"))
    XCTAssertTrue(invalid(ImageFixtures.gif(screen: (0, 1)), "image/gif").contains("0×1"))
    XCTAssertTrue(invalid(ImageFixtures.bmp(width: 2, height: 0), "image/bmp").contains("2×0"))
  }

  func testFourComponentJPEG_onlyWithAdobesCMYKOrYCCK() {
    for transform: UInt8 in [0, 2] {
      let cmyk = ImageFixtures.jpeg(
        width: 8, height: 8, components: 4, extra: [ImageFixtures.adobe(transform: transform)])
      XCTAssertEqual(accepted(cmyk, "image/jpeg")?.width, 8)
    }
    let plain = unsupported(ImageFixtures.jpeg(width: 8, height: 8, components: 4), "image/jpeg")
    XCTAssertTrue(plain.contains("without Adobe's CMYK or YCCK marker"), plain)
    let ycc = ImageFixtures.jpeg(width: 8, height: 8, components: 4, extra: [ImageFixtures.adobe(transform: 1)])
    _ = unsupported(ycc, "image/jpeg")
  }

  func testJPEGVariantsTheDecoderDoesNotRead_unsupported_andBrokenOnes_invalid() {
    XCTAssertTrue(unsupported(ImageFixtures.jpeg(width: 8, height: 8, precision: 12), "image/jpeg").contains("12-bit"))
    XCTAssertTrue(unsupported(ImageFixtures.jpeg(width: 8, height: 8, sof: 0xC9), "image/jpeg").contains("arithmetic"))
    XCTAssertTrue(unsupported(ImageFixtures.jpeg(width: 8, height: 8, sof: 0xC3), "image/jpeg").contains("lossless"))
    XCTAssertNotNil(accepted(ImageFixtures.jpeg(width: 8, height: 8, sof: 0xC1), "image/jpeg"))
    // Progressive: a DC scan holds coefficient 0 only; AC scans alone leave the DC unset.
    let progressive = ImageFixtures.jpeg(width: 8, height: 8, components: 3, sof: 0xC2, selection: [0, 0, 0])
    XCTAssertEqual(accepted(progressive, "image/jpeg")?.width, 8)
    _ = invalid(ImageFixtures.jpeg(width: 8, height: 8, sof: 0xC2), "image/jpeg")
    let acOnly = ImageFixtures.jpeg(width: 8, height: 8, sof: 0xC2, selection: [1, 63, 0])
    XCTAssertTrue(invalid(acOnly, "image/jpeg").contains("component 1 is in no scan"))
    // A component no scan fills: stb_image shows memory it never wrote for it.
    let uncovered = ImageFixtures.jpeg(width: 8, height: 8, components: 3, scanned: [1])
    XCTAssertTrue(invalid(uncovered, "image/jpeg").contains("component 2 is in no scan"))
    // A scan naming a component the frame lacks; a segment past the end; an unknown marker.
    _ = invalid(ImageFixtures.jpeg(width: 8, height: 8, scanned: [7]), "image/jpeg")
    var long = [UInt8](ImageFixtures.jpeg(width: 8, height: 8))
    long[4] = 0xFF  // the DQT length
    _ = invalid(Data(long), "image/jpeg")
    let stray = ImageFixtures.jpeg(width: 8, height: 8, extra: [[0xFF, 0xC8, 0, 2]])
    XCTAssertTrue(invalid(stray, "image/jpeg").contains("unexpected marker 0xFFC8"))
    // Huffman code lengths that do not make a prefix code (three codes of one bit).
    let badCodes: [UInt8] = [0xFF, 0xC4, 0, 22, 0x01, 3] + [UInt8](repeating: 0, count: 15) + [0, 1, 2]
    _ = invalid(ImageFixtures.jpeg(width: 8, height: 8, extra: [badCodes]), "image/jpeg")
    // A second picture after EOI (Multi-Picture Format) is left alone.
    let appended = ImageFixtures.jpeg(width: 8, height: 8) + ImageFixtures.jpeg(width: 4, height: 4)
    XCTAssertEqual(accepted(appended, "image/jpeg")?.width, 8)
  }

  func testPNGStructure() {
    XCTAssertNotNil(accepted(ImageFixtures.png(width: 2, height: 2, bitDepth: 16, colorType: 6), "image/png"))
    XCTAssertNotNil(accepted(ImageFixtures.png(width: 2, height: 2, bitDepth: 16, colorType: 0), "image/png"))
    XCTAssertNotNil(accepted(ImageFixtures.png(width: 2, height: 2, interlace: 1), "image/png"))
    XCTAssertTrue(
      invalid(ImageFixtures.png(width: 2, height: 2, bitDepth: 4, colorType: 2), "image/png").contains(
        "colour type 2 with bit depth 4"))
    XCTAssertTrue(invalid(ImageFixtures.png(width: 2, height: 2, idat: false), "image/png").contains("no IDAT"))
    XCTAssertTrue(invalid(ImageFixtures.png(width: 2, height: 2, iend: false), "image/png").contains("before IEND"))
    // A chunk whose length runs past the end of the file.
    let tooLong = ImageFixtures.png(width: 2, height: 2) + Data(ImageFixtures.be32(1_000_000) + Array("tEXt".utf8))
    var cut = [UInt8](ImageFixtures.png(width: 2, height: 2))
    cut.replaceSubrange(33..<37, with: ImageFixtures.be32(1_000_000))  // the IDAT's length
    XCTAssertNotNil(accepted(tooLong, "image/png"))  // after IEND: left alone
    XCTAssertTrue(invalid(Data(cut), "image/png").contains("runs past the end of the file"))
    // Palettes: a colour for every index the depth holds, or the cloud.
    let twoColours: [(String, [UInt8])] = [("PLTE", [0, 0, 0, 255, 255, 255])]
    XCTAssertNotNil(
      accepted(ImageFixtures.png(width: 3, height: 2, bitDepth: 1, colorType: 3, before: twoColours), "image/png"))
    let short = unsupported(
      ImageFixtures.png(width: 3, height: 2, bitDepth: 8, colorType: 3, before: twoColours), "image/png")
    XCTAssertTrue(short.contains("a palette of 2 colours for 8-bit indices"), short)
    XCTAssertTrue(invalid(ImageFixtures.png(width: 3, height: 2, colorType: 3), "image/png").contains("without a PLTE"))
    // An unknown critical chunk, Apple's variant, a tRNS in an image with alpha.
    _ = unsupported(ImageFixtures.png(width: 2, height: 2, before: [("ABCD", [])]), "image/png")
    XCTAssertNotNil(accepted(ImageFixtures.png(width: 2, height: 2, before: [("abCD", [1])]), "image/png"))
    _ = unsupported(ImageFixtures.png(width: 2, height: 2, before: [("CgBI", [])]), "image/png")
    _ = invalid(ImageFixtures.png(width: 2, height: 2, colorType: 6, before: [("tRNS", [0, 0])]), "image/png")
  }

  func testGIFFrameOutsideTheScreen_refused() {
    let outside = invalid(ImageFixtures.gif(screen: (3, 2), frame: (2, 2), origin: (2, 1)), "image/gif")
    XCTAssertTrue(outside.contains("the first frame, 2×2 at (2, 1), is not inside the 3×2 screen"), outside)
    _ = invalid(ImageFixtures.gif(screen: (3, 2), frame: (0, 1)), "image/gif")
    // Extensions before the frame are walked; a graphic control block must be 4 bytes.
    let control: [UInt8] = [0x21, 0xF9, 4, 0, 0, 0, 0, 0]
    let comment: [UInt8] = [0x21, 0xFE, 3] + Array("hey".utf8) + [0]
    XCTAssertNotNil(accepted(ImageFixtures.gif(screen: (2, 2), extensions: [control, comment]), "image/gif"))
    _ = invalid(ImageFixtures.gif(screen: (2, 2), extensions: [[0x21, 0xF9, 3, 0, 0, 0, 0]]), "image/gif")
    _ = invalid(ImageFixtures.gif(screen: (2, 2), extensions: [[0x3B]]), "image/gif")
  }

  func testBMPStructure() {
    XCTAssertTrue(
      invalid(ImageFixtures.bmp(width: 3, height: 2, dropping: 1), "image/bmp").contains("runs past the end"))
    XCTAssertTrue(
      unsupported(ImageFixtures.bmp(width: 3, height: 2, bitsPerPixel: 8, compression: 1), "image/bmp").contains(
        "run-length"))
    let short = unsupported(ImageFixtures.bmp(width: 3, height: 2, bitsPerPixel: 8, paletteEntries: 2), "image/bmp")
    XCTAssertTrue(short.contains("a palette of 2 colours for 8-bit indices"), short)
    _ = invalid(ImageFixtures.bmp(width: 3, height: 2, bitsPerPixel: 2), "image/bmp")
    var lowest = [UInt8](ImageFixtures.bmp(width: 3, height: 2))
    lowest.replaceSubrange(22..<26, with: ImageFixtures.le32(Int(Int32.min)))
    XCTAssertTrue(invalid(Data(lowest), "image/bmp").contains("3×-2147483648"))
    XCTAssertEqual(accepted(ImageFixtures.bmp(width: 3, height: 2, bitsPerPixel: 32), "image/bmp")?.height, 2)
    XCTAssertEqual(accepted(ImageFixtures.bmp(width: 3, height: 2, bitsPerPixel: 16), "image/bmp")?.height, 2)
  }

  func testMIMEType_mustAgreeWithTheBytes_aliasesTaken() {
    let png = ImageFixtures.png(width: 2, height: 2)
    let mismatch = invalid(png, "image/jpeg")
    XCTAssertTrue(mismatch.contains("declared image/jpeg, but the bytes are a PNG image"), mismatch)
    XCTAssertTrue(invalid(ImageFixtures.jpeg(width: 8, height: 8), "image/gif").contains("are a JPEG image"))
    XCTAssertNotNil(accepted(png, "IMAGE/PNG"))
    XCTAssertNotNil(accepted(png, "image/x-png"))
    for alias in ["image/jpg", "image/pjpeg", "Image/JPEG"] {
      XCTAssertNotNil(accepted(ImageFixtures.jpeg(width: 8, height: 8), alias), alias)
    }
    for alias in ["image/x-bmp", "image/x-ms-bmp"] {
      XCTAssertNotNil(accepted(ImageFixtures.bmp(width: 1, height: 1), alias), alias)
    }
  }

  func testFormatsTheDeviceDoesNotRead_unsupported_soAHybridUsesTheCloud() {
    let webp = Data(Array("RIFF".utf8) + [26, 0, 0, 0] + Array("WEBPVP8L".utf8) + [UInt8](repeating: 0, count: 18))
    XCTAssertTrue(unsupported(webp, "image/webp").contains("reads JPEG, PNG, GIF and BMP images, not image/webp"))
    XCTAssertTrue(unsupported(webp, "image/png").contains("the bytes are in the WebP format (declared image/png)"))
    let heic = Data([0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 12))
    _ = unsupported(heic, "image/heic")
    XCTAssertTrue(unsupported(heic, "image/jpeg").contains("HEIF/AVIF"))
    _ = unsupported(Data([0x49, 0x49, 0x2A, 0, 8, 0, 0, 0]), "image/tiff")
    _ = unsupported(ImageFixtures.png(width: 1, height: 1), "application/pdf")
    // A type that is not even well formed is not echoed back.
    XCTAssertTrue(unsupported(Data([1]), "image/png\u{1B}[2J").contains("not an unknown type"))
  }

  func testEmptyAndRandomBytes_refused() {
    XCTAssertTrue(invalid(Data(), "image/png").contains("no bytes"))
    var generator = SplitMix64(seed: 7)
    for round in 0..<2_000 {
      let count = 1 + Int(generator.next() % 255)
      var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      let mimeType = ["image/png", "image/jpeg", "image/gif", "image/bmp"][round % 4]
      if round % 8 < 4 {
        XCTAssertTrue(invalid(Data(bytes), mimeType).contains("but the bytes are not a"), "round \(round)")
        continue
      }
      // Random bytes behind each format's signature: refused, never a trap.
      let signature: [[UInt8]] = [
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], [0xFF, 0xD8, 0xFF], Array("GIF89a".utf8), Array("BM".utf8),
      ]
      bytes = signature[round % 4] + bytes
      XCTAssertThrowsError(try ImageCheck.check(Data(bytes), mimeType: mimeType), "round \(round)")
    }
  }

  func testASliceOfLargerData_isReadFromItsOwnStart() {
    let png = ImageFixtures.png(width: 5, height: 4)
    let slice = (Data([1, 2, 3]) + png).dropFirst(3)
    XCTAssertEqual(accepted(slice, "image/png")?.width, 5)
  }
}

/// A small deterministic generator for the random inputs.
private struct SplitMix64 {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
