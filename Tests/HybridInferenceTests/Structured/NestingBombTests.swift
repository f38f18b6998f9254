import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Server text nested far deeper than any real answer (`[[[[...`, 200,000
/// levels) must end in a typed error, never a stack overflow. A recursive
/// reader crashes the process, so each case runs in a child: this test
/// binary again, with one scenario of `NestingBombScenario`.
final class NestingBombTests: XCTestCase {
  func testStructuredAnswer_isInvalidStructuredOutput() throws { try assertChildSurvives("respond") }
  func testStructuredStream_isInvalidStructuredOutput() throws { try assertChildSurvives("stream") }
  func testPreferOnDevice_fallsBackOnADeviceNestingBomb() throws { try assertChildSurvives("fallback") }
  func testSchemaText_isUnsupportedSchema() throws { try assertChildSurvives("schema") }
  func testLocalToolCall_isGenerationFailed() throws { try assertChildSurvives("toolcall") }

  /// The scenario in a child (`ChildProcess`): a stack overflow there is a
  /// failed assertion here, and the child must have run its test and passed.
  private func assertChildSurvives(_ scenario: String) throws {
    try ChildProcess.assertPasses(
      "NestingBombScenario/testScenario", environment: ["HYBRID_NESTING_SCENARIO": scenario])
  }
}

/// One scenario of `NestingBombTests`; skipped unless the parent names one.
final class NestingBombScenario: XCTestCase {
  static let bomb = #"{"n":"# + String(repeating: "[", count: 200_000)

  struct Numbers: Generable { var n: [Int] }

  func testScenario() async throws {
    guard let scenario = ProcessInfo.processInfo.environment["HYBRID_NESTING_SCENARIO"] else {
      throw XCTSkip("run by NestingBombTests in a child process")
    }
    let schema = Numbers.generationSchema
    switch scenario {
    case "respond":
      let session = GenerativeModelSession(
        model: ScriptedModel("cloud", placement: .cloud, script: [.answer([Self.bomb])]), logHandler: .silent)
      let error = await captureError { try await session.respond(to: "p", schema: schema) }
      assertInvalidStructuredOutput(error)
    case "stream":
      let pieces = [#"{"n":"#] + Array(repeating: String(repeating: "[", count: 1000), count: 200)
      let session = GenerativeModelSession(
        model: ScriptedModel("cloud", placement: .cloud, script: [.answer(pieces)]), logHandler: .silent)
      let error = await captureError {
        for try await _ in session.streamResponse(to: "p", generating: Numbers.self) {}
      }
      assertInvalidStructuredOutput(error)
    case "fallback":
      let device = ScriptedModel("device", placement: .onDevice, script: [.answer([Self.bomb]), .answer([Self.bomb])])
      let cloud = ScriptedModel(
        "cloud", placement: .cloud, script: [.answer([#"{"n":[1]}"#]), .answer([#"{"n":[2]}"#])])
      let session = GenerativeModelSession(
        model: .hybridModel(primary: SchemaCheckingModel(base: device), secondary: cloud), logHandler: .silent)
      let answer = try await session.respond(to: "p", schema: schema)
      XCTAssertEqual(answer.rawResponse.modelVersion, "cloud")
      XCTAssertEqual(answer.content, .object(["n": .array([.number(1)])]))
      var last: JSONValue?
      for try await snapshot in session.streamResponse(to: "p", generating: Numbers.self) { last = snapshot.content }
      XCTAssertEqual(last, .object(["n": .array([.number(2)])]))
    case "schema":
      do {
        _ = try GenerationSchema(
          jsonSchema: #"{"type":"object","properties":{"a":"# + String(repeating: "[", count: 200_000))
        XCTFail("a schema nested 200,000 deep was accepted")
      } catch {
        guard case .unsupportedSchema = error else { return XCTFail("\(error)") }
      }
    case "toolcall":
      for (text, syntax) in [
        (#"{"name":"f","arguments":"# + Self.bomb, ToolCallSyntax.generic),
        ("<tool_call>" + #"{"name":"f","arguments":"# + Self.bomb + "</tool_call>", .hermes),
        ("[" + #"{"name":"f","arguments":"# + Self.bomb, .mistralJSON),
      ] {
        XCTAssertThrowsError(try ToolCallParser.parse(text, syntax: syntax)) { error in
          guard case .generationFailed? = error as? HybridInferenceError else { return XCTFail("\(error)") }
        }
      }
    default:
      XCTFail("unknown scenario \(scenario)")
    }
  }

  private func assertInvalidStructuredOutput(_ error: (any Error)?, line: UInt = #line) {
    guard case .invalidStructuredOutput(let why)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))", line: line)
    }
    XCTAssertTrue(why.contains("512"), why, line: line)
  }
}
