import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Checking an answer against a schema takes bounded time whatever the
/// answer: each (schema node, value) pair once, a step budget, and a budget
/// for `pattern`. Each case has a generous hang guard: before the bounds
/// the self-referencing schema ran past it, and the pattern took 5.9 s for
/// 61 characters before ICU gave up on its own and called it a mismatch.
final class SchemaValidatorBoundsTests: XCTestCase {
  /// Refers to itself through two branches at every level: trying every
  /// branch at every level (to the old 64-level limit) is about 2^32
  /// checks for one string.
  private let selfReferencing =
    ##"{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/b"},{"type":"number"}]},"##
    + ##""b":{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/b"},{"type":"number"}]}},"$ref":"#/$defs/a"}"##

  func testSelfReferencingAnyOf_againstOneWord_isAPromptViolation() throws {
    let schema = try GenerationSchema(jsonSchema: selfReferencing)
    let outcome = try finishes(within: 30) { try? schema.check(#""word""#) }
    XCTAssertNil(outcome, "a string is not a number")
    XCTAssertNotNil(try finishes(within: 30) { try? schema.check("7") })
  }

  func testSelfReferencingAnyOf_throughTheSession_isInvalidStructuredOutput_andTheHybridFallsBack() async throws {
    let schema = try GenerationSchema(jsonSchema: selfReferencing)
    let device = ScriptedModel("device", placement: .onDevice, script: [.answer([#""word""#])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer([#""word""#]), .answer(["7"])])
    let onlyCloud = GenerativeModelSession(model: cloud, logHandler: .silent)
    let error = await captureError { try await onlyCloud.respond(to: "p", schema: schema) }
    guard case .invalidStructuredOutput? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let hybrid = GenerativeModelSession(
      model: .hybridModel(primary: SchemaCheckingModel(base: device), secondary: cloud), logHandler: .silent)
    let answer = try await hybrid.respond(to: "p", schema: schema)
    XCTAssertEqual(answer.rawResponse.modelVersion, "cloud")
    XCTAssertEqual(answer.content, .number(7))
  }

  func testAlternativesThatAgree_checkEachLevelOnce() throws {
    // Two identical branches at each of 400 levels, failing at the bottom:
    // 2^400 checks without remembering, 800 with.
    let schema = try GenerationSchema(
      jsonSchema: ##"{"$defs":{"l":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/l"}},"##
        + ##"{"type":"array","items":{"$ref":"#/$defs/l"}},{"type":"integer"}]}},"$ref":"#/$defs/l"}"##)
    let text = String(repeating: "[", count: 400) + #""x""# + String(repeating: "]", count: 400)
    let problem = try finishes(within: 30) { () -> String? in
      do {
        _ = try schema.check(text)
        return nil
      } catch {
        return "\(error)"
      }
    }
    XCTAssertNotNil(problem)
  }

  func testPatternWithCatastrophicBacktracking_isRefusedWithinItsBudget() throws {
    let schema = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"s":{"type":"string","pattern":"^(a|a)*$"}}}"#)
    let answer = #"{"s":""# + String(repeating: "a", count: 60) + #"b"}"#
    let problem = try finishes(within: 30) { () -> String? in
      do {
        _ = try schema.check(answer)
        return nil
      } catch {
        return "\(error)"
      }
    }
    XCTAssertTrue(problem?.contains("took more than") == true, String(describing: problem))
    XCTAssertNoThrow(try schema.check(#"{"s":"aaaa"}"#))
    XCTAssertThrowsError(try schema.check(#"{"s":"ab"}"#))
  }

  /// Runs `body` on a thread of its own and fails (without waiting) when it
  /// has not returned within `seconds`: a hang guard, not a speed test.
  private func finishes<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      result.withLock { $0 = Result { try body() } }
      done.signal()
    }
    guard done.wait(timeout: .now() + seconds) == .success, let outcome = result.withLock({ $0 }) else {
      XCTFail("still running after \(seconds) s")
      throw CancellationError()
    }
    return try outcome.get()
  }
}
