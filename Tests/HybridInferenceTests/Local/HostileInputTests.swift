import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Input that once trapped the process (an `Int(...)` of `1e300`, an
/// `Int32(...)` of `.max`, a sum that overflowed): each case runs in a child
/// process (`ChildProcess`), so a regression fails an assertion here instead
/// of ending the test run. Before the fixes, each child died of SIGILL
/// (Swift's overflow trap) at its first case.
final class HostileInputTests: XCTestCase {
  /// Crafted files (scripts/make-crafted-models.py) whose numbers overflowed the check's own arithmetic.
  static let overflowingKinds = [
    "tensor-offset-near-int-max": "tensor token_embd.weight ends past byte 9223372036854775807",
    "attention-widths-overflow": "overflow",
  ]

  func testCraftedFilesWithOverflowingNumbers_areRefused_inAChild() async throws {
    try await ChildProcess.assertPasses(
      self, environment: ["HYBRID_CRAFTED_DIR": GeneratedFiles.craftedModels.get().directory]
    ) {
      try await craftedFilesWithOverflowingNumbers()
    }
  }

  func testMaximalOptions_answerOrThrowTypedErrors_inAChild() async throws {
    try await ChildProcess.assertPasses(self) { try await maximalOptions() }
  }

  func testHugeSchemaNumbers_areClampedOrRefused_inAChild() async throws {
    try await ChildProcess.assertPasses(self) { try await hugeSchemaNumbers() }
  }

  private func craftedFilesWithOverflowingNumbers() async throws {
    let directory = try XCTUnwrap(ProcessInfo.processInfo.environment["HYBRID_CRAFTED_DIR"])
    for (kind, expected) in Self.overflowingKinds.sorted(by: { $0.key < $1.key }) {
      let model = LocalSystemModel(modelPath: directory + "/\(kind).gguf")
      XCTAssertEqual(model.availability, .unavailable(.modelNotReady), kind)
      do {
        try await model.prepare()
        XCTFail("\(kind) must be refused")
      } catch HybridInferenceError.invalidModelFile(_, let reason) {
        XCTAssertTrue(reason.contains(expected), "\(kind): reason was: \(reason)")
      }
    }
  }

  private func maximalOptions() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    // `.max` tokens: until the window is full.
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(contextSize: 256), logHandler: .silent)
    let response = try await session.respond(
      to: "Count", options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: .max)))
    let usage = try XCTUnwrap(response.rawResponse.usageMetadata)
    let used = (usage.promptTokenCount ?? 0) + (usage.candidatesTokenCount ?? 0)
    // Greedy, the tiny model never ends its answer: it stops where the window does.
    XCTAssertEqual(response.rawResponse.finishReason, .maxTokens)
    XCTAssertEqual(used, 256, "the window is full")
    // A temperature past Float's range acts as Float's largest.
    _ = try await GenerativeModelSession(model: try LocalTestModels.tiny(), logHandler: .silent).respond(
      to: "Hi", options: .foundationModels(GenerationOptions(temperature: 1e300, maximumResponseTokens: 4)))
    // A batch as large as an Int: clamped to the window (it was an Int32(...) of it).
    let wide = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, batchSize: .max)
    _ = try await GenerativeModelSession(model: wide, logHandler: .silent).respond(
      to: "Hi", options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 4)))
    XCTAssertEqual(wide.batchedContext?.settings.batchSize, 256)
    // Threads as many as an Int: clamped to ggml's 512 (it was an Int32(...) of it).
    let crowded = LocalSystemModel(modelPath: path, contextSize: 256, threads: .max)
    try await crowded.prepare()
    XCTAssertEqual(crowded.batchedContext?.settings.threads, LocalSystemModel.maximumThreads)
    // A context as large as an Int: clamped to 2^24 tokens, which the memory
    // check then weighs (it was `contextSize * parallelRequests`, overflowing).
    let vast = LocalSystemModel(modelPath: path, contextSize: .max, threads: 2, parallelRequests: .max)
    XCTAssertEqual(vast.parallelRequests, LocalSystemModel.maximumParallelRequests)
    if vast.availability == .available {
      XCTAssertEqual(vast.effectiveContextSize(trainedContextLength: nil), LocalSystemModel.maximumContextSize)
    } else {
      XCTAssertEqual(vast.availability, .unavailable(.deviceNotEligible))
    }
  }

  private func hugeSchemaNumbers() async throws {
    let longName = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"name":{"type":"string","maxLength":1e300}},"required":["name"]}"#)
    XCTAssertTrue(try SchemaGrammar.gbnf(for: longName).contains("char{0,4096}"), "clamped to what the device produces")
    let manyTags = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":1e19}}}"#
    )
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(), logHandler: .silent)
    do {
      _ = try await session.respond(to: "Tags", schema: manyTags)
      XCTFail("a minimum the device cannot produce is refused")
    } catch HybridInferenceError.unsupportedSchema(let path, let reason) {
      XCTAssertEqual(path, "$.tags")
      XCTAssertTrue(reason.contains("minItems"), reason)
    }
  }
}
