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
/// reader crashes the process, so each case runs in a child (`ChildProcess`):
/// this test binary again, on the same test.
final class NestingBombTests: XCTestCase {
  static let bomb = #"{"n":"# + String(repeating: "[", count: 200_000)

  struct Numbers: Generable { var n: [Int] }

  func testStructuredAnswer_isInvalidStructuredOutput() async throws {
    try await ChildProcess.assertPasses(self) {
      let session = GenerativeModelSession(
        model: ScriptedModel("cloud", placement: .cloud, script: [.answer([Self.bomb])]), logHandler: .silent)
      let error = await captureError { try await session.respond(to: "p", schema: Numbers.generationSchema) }
      assertInvalidStructuredOutput(error)
    }
  }

  func testStructuredStream_isInvalidStructuredOutput() async throws {
    try await ChildProcess.assertPasses(self) {
      let pieces = [#"{"n":"#] + Array(repeating: String(repeating: "[", count: 1000), count: 200)
      let session = GenerativeModelSession(
        model: ScriptedModel("cloud", placement: .cloud, script: [.answer(pieces)]), logHandler: .silent)
      let error = await captureError {
        for try await _ in session.streamResponse(to: "p", generating: Numbers.self) {}
      }
      assertInvalidStructuredOutput(error)
    }
  }

  func testPreferOnDevice_fallsBackOnADeviceNestingBomb() async throws {
    try await ChildProcess.assertPasses(self) {
      let device = ScriptedModel("device", placement: .onDevice, script: [.answer([Self.bomb]), .answer([Self.bomb])])
      let cloud = ScriptedModel(
        "cloud", placement: .cloud, script: [.answer([#"{"n":[1]}"#]), .answer([#"{"n":[2]}"#])])
      let session = GenerativeModelSession(
        model: .hybridModel(primary: SchemaCheckingModel(base: device), secondary: cloud), logHandler: .silent)
      let answer = try await session.respond(to: "p", schema: Numbers.generationSchema)
      XCTAssertEqual(answer.rawResponse.modelVersion, "cloud")
      XCTAssertEqual(answer.content, .object(["n": .array([.number(1)])]))
      var last: JSONValue?
      for try await snapshot in session.streamResponse(to: "p", generating: Numbers.self) { last = snapshot.content }
      XCTAssertEqual(last, .object(["n": .array([.number(2)])]))
    }
  }

  func testSchemaText_isUnsupportedSchema() async throws {
    try await ChildProcess.assertPasses(self) {
      do {
        _ = try GenerationSchema(
          jsonSchema: #"{"type":"object","properties":{"a":"# + String(repeating: "[", count: 200_000))
        XCTFail("a schema nested 200,000 deep was accepted")
      } catch {
        guard case .unsupportedSchema? = error as? HybridInferenceError else { return XCTFail("\(error)") }
      }
    }
  }

  func testLocalToolCall_isGenerationFailed() async throws {
    try await ChildProcess.assertPasses(self) {
      for (text, syntax) in [
        (#"{"name":"f","arguments":"# + Self.bomb, ToolCallSyntax.generic),
        ("<tool_call>" + #"{"name":"f","arguments":"# + Self.bomb + "</tool_call>", .hermes),
        ("[TOOL_CALLS][" + #"{"name":"f","arguments":"# + Self.bomb, .mistralJSON),
      ] {
        XCTAssertThrowsError(try ToolCallParser.parse(text, syntax: syntax)) { error in
          guard case .generationFailed? = error as? HybridInferenceError else { return XCTFail("\(error)") }
        }
      }
    }
  }

  private func assertInvalidStructuredOutput(_ error: (any Error)?, line: UInt = #line) {
    guard case .invalidStructuredOutput(let why)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))", line: line)
    }
    XCTAssertTrue(why.contains("512"), why, line: line)
  }
}
