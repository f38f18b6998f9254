import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

final class UTF8StreamDecoderTests: XCTestCase {
  /// Latin, Greek, Cyrillic, CJK, Devanagari, emoji with a modifier and a flag.
  private let mixedScript = "Añé Ωμέγα Привет 日本語 नमस्ते 👍🏽 🇫🇷 ok"

  func testEverySplitPointOfEveryCharacter_decodesWithoutReplacementCharacters() {
    let bytes = Array(mixedScript.utf8)
    for split in 0...bytes.count {
      var decoder = UTF8StreamDecoder()
      let text = decoder.decode(bytes[..<split]) + decoder.decode(bytes[split...]) + decoder.finish()
      XCTAssertEqual(text, mixedScript, "split at byte \(split)")
      XCTAssertFalse(text.contains("\u{FFFD}"), "split at byte \(split)")
    }
  }

  func testByteByByte_holdsIncompleteCharactersUntilComplete() {
    var decoder = UTF8StreamDecoder()
    var pieces: [String] = []
    for byte in mixedScript.utf8 { pieces.append(decoder.decode([byte])) }
    pieces.append(decoder.finish())
    XCTAssertEqual(pieces.joined(), mixedScript)
    XCTAssertFalse(pieces.contains { $0.contains("\u{FFFD}") })
    // "日" is three bytes: nothing comes out until the third arrives.
    var cjk = UTF8StreamDecoder()
    XCTAssertEqual(cjk.decode([0xE6]), "")
    XCTAssertEqual(cjk.decode([0x97]), "")
    XCTAssertEqual(cjk.decode([0xA5]), "日")
  }

  func testInvalidBytes_becomeReplacementAndDecodingRecovers() {
    var decoder = UTF8StreamDecoder()
    XCTAssertEqual(decoder.decode([0x61, 0xFF, 0x62]), "a\u{FFFD}b")
    XCTAssertEqual(decoder.decode(Array("é".utf8)), "é")
    XCTAssertEqual(decoder.decode([0xE6, 0x97]), "")
    XCTAssertEqual(decoder.finish(), "\u{FFFD}", "an unfinished character at the end is reported")
  }
}
