import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceJinja

/// Structured output's JSON text (the library's `OrderedJSON`, not the test
/// target's reader of the same name) and the chat templates' `tojson` quote
/// strings with two writers (the core and Jinja targets cannot import each
/// other); these tests keep their bytes identical.
final class OrderedJSONQuotingTests: XCTestCase {
  func testEveryASCIIScalar_isQuotedAsTheTemplatesQuoteIt() {
    for value in 0..<0x80 {
      let text = String(Character(Unicode.Scalar(UInt8(value))))
      XCTAssertEqual(HybridInferenceCore.OrderedJSON.quote(text), JSONStringLiteral.quoted(text), "scalar \(value)")
    }
  }

  func testNonASCIIAndMixedText_isQuotedAsTheTemplatesQuoteIt() {
    let samples = [
      "", "plain", "tab\there", "quote \" and \\ backslash", "\u{7F}\u{80}\u{2028}\u{FEFF}",
      "héllo wörld", "emoji 👩‍🚀 and CJK 汉字", "\u{0}\u{1F}\u{1B}[31m", "line\r\nbreak",
    ]
    for text in samples {
      XCTAssertEqual(HybridInferenceCore.OrderedJSON.quote(text), JSONStringLiteral.quoted(text), text.debugDescription)
    }
  }

  func testQuotedText_isJSONThatDecodesToTheSameString() throws {
    let text = "a\u{0}b\u{1F}c\"d\\e\nf👩‍🚀"
    let decoded = try JSONDecoder().decode(String.self, from: Data(HybridInferenceCore.OrderedJSON.quote(text).utf8))
    XCTAssertEqual(decoded, text)
  }
}
