import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The maxLength bug: llama.cpp's grammar engine decodes token bytes
/// leniently (a lead byte takes the low bits of whatever follows; leads up to
/// 0xF7 and surrogates pass), so ill-formed bytes counted as one character
/// of a string there and as several U+FFFD here: seed 1 on the tiny model
/// gave `" that ZM( L\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}"`, 15 scalars under a
/// `maxLength` of 12. Constrained sampling now refuses any token that would
/// make the answer ill-formed UTF-8.
final class UTF8ValidatorTests: XCTestCase {
  func testWellFormedSequencesPass() {
    for text in ["plain", "é", "€", "😀", "\u{10FFFF}", "\u{D7FF}", "\u{E000}"] {
      XCTAssertEqual(UTF8Validator().after(Array(text.utf8))?.isAtBoundary, true, text)
    }
  }

  func testIllFormedSequencesAreRefused() {
    let cases: [[UInt8]] = [
      [0x80],  // a continuation byte alone
      [0xC3, 0x61],  // a lead followed by ASCII: llama.cpp reads one code point
      [0xC3, 0x22],  // a lead that would swallow the closing quote
      [0xC0, 0x80], [0xC1, 0xBF],  // overlong two-byte forms
      [0xE0, 0x80, 0x80],  // overlong three-byte form
      [0xED, 0xA0, 0x80],  // a surrogate (U+D800)
      [0xF0, 0x80, 0x80, 0x80],  // overlong four-byte form
      [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
      [0xF5, 0x80, 0x80, 0x80], [0xF8], [0xFF],  // leads that do not exist
    ]
    for bytes in cases {
      XCTAssertNil(UTF8Validator().after(bytes), "\(bytes)")
    }
  }

  func testASequenceMaySpanTokens() throws {
    let first = try XCTUnwrap(UTF8Validator().after([0xE2, 0x82]))
    XCTAssertFalse(first.isAtBoundary)
    XCTAssertEqual(first.after([0xAC])?.isAtBoundary, true)
    XCTAssertNil(first.after([0x22]))
  }

  /// Every token's bytes, checked through the table the sampler uses: a
  /// whole token after a boundary passes; nothing continues an open sequence
  /// but a continuation byte.
  func testVocabularyTableOnTheTinyModel() async throws {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let table = model.vocabularyBytes
    let open = try XCTUnwrap(UTF8Validator().after([0xC3]))
    let quote = try model.tokenize(#"""#, addSpecial: false, parseSpecial: false)
    let token = try XCTUnwrap(quote.first)
    XCTAssertNotNil(table.state(after: token, from: UTF8Validator()))
    XCTAssertNil(table.state(after: token, from: open))
    XCTAssertNil(table.state(after: -1, from: UTF8Validator()))
  }
}
