import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Integers beyond 2^53 (a `Double`'s exact range) in tool arguments and
/// structured answers reach the app unchanged: never silently rounded.
final class ExactIntegerTests: XCTestCase {
  /// 2^53 + 1, and UInt64's largest: the first rounds to 2^53 as a Double,
  /// the second does not fit in Int64 at all.
  private let arguments = #"{"id":9007199254740993,"big":18446744073709551615,"small":-9007199254740993}"#

  private struct IDs: Generable, Equatable {
    var id: Int64
    var big: UInt64
    var small: Int
  }

  private struct IDTool: Tool {
    let calls = Locked<[IDs]>([])
    var received: IDs? { calls.withLock { $0.last } }
    let name = "lookup"
    let description = "Looks up an id."
    func call(arguments: IDs) async throws -> String {
      calls.withLock { $0.append(arguments) }
      return "found"
    }
  }

  private let expected = IDs(id: 9_007_199_254_740_993, big: .max, small: -9_007_199_254_740_993)

  func testOpenAIToolArguments_reachTheToolExactly() async throws {
    let call = ChatCompletionResponse.functionCall(id: "c1", "lookup", arguments)
    let tool = IDTool()
    let model = ScriptedModel("server", placement: .cloud, script: [.calls([call]), .answer(["done"])])
    let session = GenerativeModelSession(model: model, tools: [tool], logHandler: .silent)
    _ = try await session.respond(to: "look it up")
    XCTAssertEqual(tool.received, expected)
    XCTAssertEqual(session.transcript.entries[1].toolCalls.first?.argumentsJSON.contains("9007199254740993"), true)
  }

  func testLocalToolCall_keepsTheDigits() throws {
    let (_, calls) = try ToolCallParser.parse(#"{"name":"lookup","arguments":"# + arguments + "}", syntax: .generic)
    let args = try XCTUnwrap(calls.first?.args)
    XCTAssertEqual(try JSONDecoder().decode(IDs.self, from: Data(args.jsonText.utf8)), expected)
  }

  func testStructuredAnswer_contentAndSnapshots_keepTheDigits() async throws {
    let session = GenerativeModelSession(
      model: ScriptedModel(
        "cloud", placement: .cloud,
        script: [.answer([arguments]), .answer(["{\"id\":90071992", "54740993,\"big\":1,\"small\":0}"])]),
      logHandler: .silent)
    let answer = try await session.respond(to: "p", schema: IDs.generationSchema)
    let id = try XCTUnwrap(JSONValue.ExactInteger("9007199254740993"))
    XCTAssertEqual(answer.content["id"], .exactInteger(id))
    XCTAssertEqual(answer.content["big"], .exactInteger(JSONValue.ExactInteger(UInt64.max)))
    var last: JSONValue?
    for try await snapshot in session.streamResponse(to: "p", generating: IDs.self) { last = snapshot.content }
    XCTAssertEqual(last?["id"], .exactInteger(id))
    XCTAssertEqual(last?["big"], .number(1))
  }

  func testJSONValueCodable_roundTripsTheDigits() throws {
    let value = try JSONDecoder().decode(JSONValue.self, from: Data(arguments.utf8))
    XCTAssertEqual(value["id"], .exactInteger(JSONValue.ExactInteger(Int64(9_007_199_254_740_993))))
    XCTAssertEqual(value["big"]?.jsonText, "18446744073709551615")
    let text = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    XCTAssertEqual(try JSONDecoder().decode(IDs.self, from: Data(text.utf8)), expected)
    XCTAssertEqual(
      try JSONDecoder().decode(JSONValue.self, from: Data("[1.5,42]".utf8)), .array([.number(1.5), .number(42)]))
  }

  func testBoundsAreComparedExactly() throws {
    let schema = try GenerationSchema(jsonSchema: #"{"type":"integer","maximum":9007199254740992}"#)
    XCTAssertNoThrow(try schema.check("9007199254740992"))
    XCTAssertThrowsError(try schema.check("9007199254740993"))
    let exactBound = try GenerationSchema(jsonSchema: #"{"type":"integer","minimum":18446744073709551615}"#)
    XCTAssertNoThrow(try exactBound.check("18446744073709551615"))
    XCTAssertThrowsError(try exactBound.check("18446744073709551614"))
  }

  func testExactIntegerSyntax() {
    XCTAssertNotNil(JSONValue.ExactInteger("-12345678901234567890123"))
    for bad in ["", "-", "01", "1.0", "1e3", "+1", "12a"] { XCTAssertNil(JSONValue.ExactInteger(bad), bad) }
    XCTAssertEqual(JSONValue.ExactInteger(Int64.min).exactly(Int64.self), .min)
    XCTAssertNil(JSONValue.ExactInteger(UInt64.max).exactly(Int64.self))
  }
}
