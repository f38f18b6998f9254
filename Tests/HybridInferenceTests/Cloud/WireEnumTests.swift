import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini

/// The REST enums are structs over their wire strings (no shared protocol
/// in the public API): a value newer than the library decodes, keeps its
/// name and encodes back unchanged.
final class WireEnumTests: XCTestCase {
  func testUnknownFinishReason_decodesKeepsItsNameAndEncodesBack() throws {
    let json = Data(#""SOME_FUTURE_REASON""#.utf8)
    let reason = try JSONDecoder().decode(FinishReason.self, from: json)
    XCTAssertEqual(reason.rawValue, "SOME_FUTURE_REASON")
    XCTAssertEqual(reason.description, "SOME_FUTURE_REASON")
    XCTAssertEqual(try JSONEncoder().encode(reason), json)
  }

  func testKnownValues_equalTheirConstants() throws {
    let decoder = JSONDecoder()
    XCTAssertEqual(try decoder.decode(FinishReason.self, from: Data(#""STOP""#.utf8)), .stop)
    let reason = try decoder.decode(PromptFeedback.BlockReason.self, from: Data(#""SAFETY""#.utf8))
    XCTAssertEqual(reason, .safety)
  }

  func testSafetySettingEnums_encodeTheirWireNames() throws {
    let setting = SafetySetting(category: .harassment, threshold: .blockNone)
    let text = String(decoding: try JSONEncoder().encode(setting), as: UTF8.self)
    XCTAssertTrue(text.contains("\"HARM_CATEGORY_HARASSMENT\""), text)
    XCTAssertTrue(text.contains("\"BLOCK_NONE\""), text)
  }

  func testANonStringValue_isADecodingError() {
    XCTAssertThrowsError(try JSONDecoder().decode(FinishReason.self, from: Data("42".utf8)))
  }
}
