import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// A decision that crosses (`AttentionChoice.Decision.offFromDepth`): the
/// context starts with flash attention on and is made again without it when
/// a conversation passes the crossing, its cells moved across in the other
/// layout (`SequenceStateLayout.withValues`), not decoded again, and with it
/// again once only a short conversation is held. The decision
/// comes from a stored calibration in the prompt cache's directory, as a
/// later process reads one.
final class AttentionSwitchTests: XCTestCase {
  private func greedy(_ tokens: Int) -> HybridGenerationOptions {
    .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
  }

  func testAConversationPastTheCrossing_goesOnWithoutTheKernel_keepingItsCells() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switch-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let contextSize = 1024
    let loaded = try await LocalSystemModel(modelPath: path, contextSize: contextSize, threads: 2).loadedModel(
      progress: nil)
    let key = AttentionCalibrationStore.Key(
      model: loaded.fingerprint, shape: try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded)), threads: 2,
      depths: AttentionCalibration.depths(contextSize: contextSize))
    AttentionCalibrationStore.store(
      AttentionCalibration.Verdict(flash: true, reason: "on below depth 60, off from it", offFromDepth: 60), key: key,
      directory: directory)
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(
      modelPath: path, contextSize: contextSize, threads: 2, promptCache: .directory(directory))
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let first = try await session.respond(to: "Hi.", options: greedy(8))
    let context = try XCTUnwrap(model.batchedContext)
    XCTAssertEqual(context.settings.flashAttention.offFromDepth, 60)
    let held = (first.rawResponse.usageMetadata?.promptTokenCount ?? 0)
    XCTAssertLessThan(held, 60, "the first turn must start before the crossing")
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED)
    let question = String(repeating: "Lights along the quay, boats in the harbour. ", count: 8) + "What now?"
    let second = try await session.respond(to: question, options: greedy(8))
    XCTAssertGreaterThanOrEqual(second.rawResponse.usageMetadata?.promptTokenCount ?? 0, 60)
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED, "made again without the kernel")
    XCTAssertGreaterThanOrEqual(
      second.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, held, "the first exchange moved across")
    XCTAssertEqual(context.cellsPerSequence, 512, "the same size: only the setting changed")
    let lines = logs.records.map(\.message).filter { $0.hasPrefix("flash attention") }
    XCTAssertEqual(lines.count, 2, "\(lines)")
    XCTAssertTrue(lines.last?.hasPrefix("flash attention off, a conversation past depth 60: on below depth 60") == true)
    // And the conversation goes on there.
    let third = try await session.respond(to: "And then?", options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
    XCTAssertGreaterThan(third.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, held)
    // A new, short conversation takes the one sequence: nothing deep is held, so on again.
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi.", options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED, "on again for a short conversation")
    // And the long one, back on the sequence, is past the crossing again.
    _ = try await session.respond(to: "Go on.", options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
  }
}
