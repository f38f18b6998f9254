import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `FlashAttention` and the rule behind `.automatic` (`AttentionChoice`), with
/// the facts it decides from injected, then on a real model and context.
final class FlashAttentionTests: XCTestCase {
  private func cpu(_ headSize: Int?) -> AttentionChoice.Facts {
    AttentionChoice.Facts(headSize: headSize, offloadsToGPU: false)
  }

  func testAutomatic_onTheCPU_isOffForNarrowHeads_andOnForWideOnes() {
    // SmolLM2 (64) and the tiny model (16) measured faster off, Gemma 3 270M (256) on.
    for head in [16, 64, 96, AttentionChoice.minimumCPUHeadSize - 1] {
      XCTAssertEqual(
        AttentionChoice.decide(.automatic, facts: cpu(head)).type, LLAMA_FLASH_ATTN_TYPE_DISABLED, "head \(head)")
    }
    for head in [AttentionChoice.minimumCPUHeadSize, 256, 512] {
      XCTAssertEqual(
        AttentionChoice.decide(.automatic, facts: cpu(head)).type, LLAMA_FLASH_ATTN_TYPE_ENABLED, "head \(head)")
    }
    XCTAssertEqual(AttentionChoice.decide(.automatic, facts: cpu(nil)).type, LLAMA_FLASH_ATTN_TYPE_DISABLED)
  }

  func testAutomatic_onAGPU_leavesItToLlamaCpp() {
    for head in [nil, 64, 256] {
      let facts = AttentionChoice.Facts(headSize: head, offloadsToGPU: true)
      XCTAssertEqual(AttentionChoice.decide(.automatic, facts: facts).type, LLAMA_FLASH_ATTN_TYPE_AUTO)
    }
  }

  func testOnAndOff_winOverEveryFact() {
    for facts in [cpu(16), cpu(256), cpu(nil), AttentionChoice.Facts(headSize: 64, offloadsToGPU: true)] {
      XCTAssertEqual(AttentionChoice.decide(.on, facts: facts).type, LLAMA_FLASH_ATTN_TYPE_ENABLED)
      XCTAssertEqual(AttentionChoice.decide(.off, facts: facts).type, LLAMA_FLASH_ATTN_TYPE_DISABLED)
    }
  }

  func testTheReason_namesTheHeadSizeAndTheRule() {
    let reason = AttentionChoice.decide(.automatic, facts: cpu(64)).reason
    XCTAssertTrue(reason.hasPrefix("off (automatic"), reason)
    XCTAssertTrue(reason.contains("64"), reason)
    XCTAssertTrue(AttentionChoice.decide(.on, facts: cpu(64)).reason.contains("asked"))
  }

  func testTheHeadSize_isReadFromTheFile() throws {
    // The tiny model: 64 wide, 4 heads, no attention.key_length; SmolLM2: 576 / 9.
    XCTAssertEqual(try GGUFFile.read(path: LocalTestModels.require(LocalTestModels.tinyPath)).attentionHeadSize, 16)
    XCTAssertEqual(try GGUFFile.read(path: LocalTestModels.require(LocalTestModels.defaultPath)).attentionHeadSize, 64)
  }

  func testTheContext_getsTheDecidedSetting_andThePromptCacheKeyReadsIt() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fa-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    var keys: [FlashAttention: PromptCacheKey] = [:]
    let expected: [FlashAttention: llama_flash_attn_type] = [
      .automatic: LLAMA_FLASH_ATTN_TYPE_DISABLED, .on: LLAMA_FLASH_ATTN_TYPE_ENABLED,
      .off: LLAMA_FLASH_ATTN_TYPE_DISABLED,
    ]
    for setting in [FlashAttention.automatic, .on, .off] {
      let model = LocalSystemModel(
        modelPath: path, contextSize: 256, threads: 2, promptCache: .directory(directory), flashAttention: setting)
      try await model.prepare()
      let context = try XCTUnwrap(model.batchedContext)
      XCTAssertEqual(context.settings.flashAttention.type, expected[setting], "\(setting)")
      let key = try XCTUnwrap(context.cacheKey)
      XCTAssertEqual(
        key,
        PromptCacheKey(
          model: context.model.fingerprint, flashAttention: expected[setting] ?? LLAMA_FLASH_ATTN_TYPE_AUTO))
      keys[setting] = key
    }
    // .automatic on this model is .off: their saved states are interchangeable; .on's are not.
    XCTAssertEqual(keys[.automatic], keys[.off])
    XCTAssertNotEqual(keys[.automatic], keys[.on])
  }

  func testTheDecision_isLoggedWhenTheContextIsMade() async throws {
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 256, threads: 2)
    try await model.prepare()
    let lines = logs.records.filter { $0.category == .local && $0.message.hasPrefix("flash attention") }
    XCTAssertEqual(
      lines.map(\.message), ["flash attention off (automatic: CPU backend, attention heads 16 wide, under 128)"])
    XCTAssertEqual(lines.first?.level, .info)
  }
}
