import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The JSON reader fed a piece at a time: the same values as reading each
/// prefix whole, at JSONDecoder's depth limit, and the snapshot value the
/// stream builds from it.
final class IncrementalParserTests: XCTestCase {
  private let documents = [
    #"{"title":"Pancakes \"quick\"","minutes":15,"vegetarian":true,"ingredients":["flour","milk"]}"#,
    #"[{"a":[1,2.5e3,-0.25,null,false]},{"b":{"c":"\u00e9\ud83d\ude00\n"}},[],{},"",-12]"#,
    #"  {"a" : [ [ [ 1 ] , { "b" : [ ] } ] ] , "k\\":"v\/" }  "#,
    #"{"dup":1,"dup":[2,{"x":"y"}],"n":9007199254740993,"big":123456789012345678901234567890}"#,
    #""just a string with \t escapes""#,
    "42",
  ]

  func testEverySnapshotEqualsTheWholePrefixRead_byteByByte() throws {
    for document in documents {
      var reader = JSONSnapshotReader()
      var prefix = ""
      for character in document {
        prefix.append(character)
        let incremental = try reader.read(prefix)
        let whole = try JSONPrefixParser.parsePrefix(prefix)?.jsonValue
        XCTAssertEqual(incremental, whole, prefix)
      }
      XCTAssertEqual(try reader.read(document), try JSONPrefixParser.parse(document).jsonValue)
    }
  }

  func testSnapshotsKeptByTheCaller_areNotChangedByLaterPieces() throws {
    var reader = JSONSnapshotReader()
    let first = try reader.read(#"{"a":["x","y"#)
    let second = try reader.read(#"{"a":["x","yz"],"b":1"#)
    XCTAssertEqual(first, .object(["a": .array([.string("x"), .string("y")])]))
    XCTAssertEqual(second, .object(["a": .array([.string("x"), .string("yz")]), "b": .number(1)]))
  }

  func testATextThatDoesNotContinueThePrevious_isReadFromTheStart() throws {
    var reader = JSONSnapshotReader()
    _ = try reader.read(#"{"first":"round one, long enough"#)
    XCTAssertEqual(try reader.read(#"{"second":2}"#), .object(["second": .number(2)]))
    XCTAssertEqual(try reader.read(#"{"second":2} and more"#), .object(["second": .number(2)]))
  }

  func testTheReaderRefusesWhatTheWholeReaderRefuses() {
    for bad in ["{]", #"{"a" 1}"#, "[01]", "[1,]x", #"["\x"]"#, #"["\ud800\u0041"]"#, "[\"a\u{01}\"]", "tru3", "1e400"]
    {
      var reader = JSONSnapshotReader()
      var failed = false
      var prefix = ""
      for character in bad where !failed {
        prefix.append(character)
        failed = (try? reader.read(prefix)) == nil
      }
      XCTAssertTrue(failed || (try? JSONPrefixParser.parse(bad)) == nil, bad)
      XCTAssertThrowsError(try JSONPrefixParser.parse(bad), bad)
    }
  }

  func testDepthLimit_isJSONDecodersFiveHundredTwelve() throws {
    let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    let deeper = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
    XCTAssertNoThrow(try JSONPrefixParser.parse(deepest))
    XCTAssertNoThrow(try JSONDecoder().decode(JSONValue.self, from: Data(deepest.utf8)))
    XCTAssertThrowsError(try JSONPrefixParser.parse(deeper)) { error in
      XCTAssertTrue("\(error)".contains("deeper than 512"), "\(error)")
    }
    XCTAssertThrowsError(try JSONDecoder().decode(JSONValue.self, from: Data(deeper.utf8)))
    XCTAssertThrowsError(try JSONPrefixParser.parsePrefix(String(repeating: "[", count: 513)))
  }

  func testSchemaValue_nestedDeeperThanTheLimit_isUnsupportedSchema() {
    var deep = JSONValue.object(["type": .string("string")])
    for _ in 0..<600 { deep = .object(["type": .string("array"), "items": deep]) }
    XCTAssertThrowsError(try GenerationSchema(jsonSchema: deep)) { error in
      guard case .unsupportedSchema? = error as? HybridInferenceError else { return XCTFail("\(error)") }
    }
  }

  func testDeepestAllowedAnswer_validatesInATask() async throws {
    // 512 levels (the most a value can have) of a recursive schema: the
    // checks recurse three times as deep, in a task's thread (the library's
    // callers are async).
    let schema = try GenerationSchema(
      jsonSchema:
        ##"{"$defs":{"l":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/l"}},{"type":"integer"}]}},"$ref":"#/$defs/l"}"##
    )
    let text = String(repeating: "[", count: 512) + "1" + String(repeating: "]", count: 512)
    let value = try await Task { try schema.check(text) }.value
    XCTAssertEqual(value.jsonText, text)
    // Six checks per level (3,072 at once): the validator's stack is its
    // own, not the thread's.
    let chain = try GenerationSchema(
      jsonSchema: ##"{"$defs":{"l":{"anyOf":[{"$ref":"#/$defs/m"}]},"m":{"anyOf":[{"$ref":"#/$defs/n"}]},"##
        + ##""n":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/l"}},{"type":"integer"}]}},"$ref":"#/$defs/l"}"##)
    let outcome = await Task { Result { try chain.check(text) } }.value
    XCTAssertEqual(try outcome.get().jsonText, text)
    XCTAssertThrowsError(
      try chain.check(String(repeating: "[", count: 512) + #""x""# + String(repeating: "]", count: 512)))
  }

  /// Found by the `json` fuzz target on the old reader: a number that ends the
  /// text was "the document ends early", so a bare number was no document.
  func testABareNumber_isADocument() throws {
    for (text, value) in [("1", 1.0), (" 42 ", 42), ("-0.5", -0.5), ("1e3", 1000)] {
      XCTAssertEqual(try JSONPrefixParser.parse(text).jsonValue, .number(value), text)
    }
  }
}
