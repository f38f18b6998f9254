import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Where `.automatic`'s decision goes: the context, the log, the prompt
/// cache's key, and the stored decision a later process reads back
/// (`AttentionCalibrationStore`), which it treats as hostile input.
final class FlashAttentionContextTests: XCTestCase {
  private func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("fa-\(UUID().uuidString)")
  }

  func testTheContext_getsTheDecidedSetting_andThePromptCacheKeyReadsIt() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var keys: [FlashAttention: PromptCacheKey] = [:]
    var types: [FlashAttention: llama_flash_attn_type] = [:]
    for setting in [FlashAttention.automatic, .on, .off] {
      let model = LocalSystemModel(
        modelPath: path, contextSize: 256, threads: 2, promptCache: .directory(directory), flashAttention: setting)
      try await model.prepare()
      let context = try XCTUnwrap(model.batchedContext)
      types[setting] = context.settings.flashAttention.type
      let key = try XCTUnwrap(context.cacheKey)
      XCTAssertEqual(
        key,
        PromptCacheKey(
          model: context.model.fingerprint, offload: context.model.offload,
          flashAttention: context.settings.flashAttention.type))
      keys[setting] = key
    }
    XCTAssertEqual(types[.on], LLAMA_FLASH_ATTN_TYPE_ENABLED)
    XCTAssertEqual(types[.off], LLAMA_FLASH_ATTN_TYPE_DISABLED)
    // Whichever .automatic measured, its states are those of that setting's.
    let automatic = try XCTUnwrap(types[.automatic])
    XCTAssertEqual(keys[.automatic], keys[automatic == LLAMA_FLASH_ATTN_TYPE_ENABLED ? .on : .off])
    // And the decision is stored beside the states, for the next process.
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    XCTAssertEqual(files.filter { $0.hasPrefix("attention-") && $0.hasSuffix(".json") }.count, 1, "\(files)")
  }

  func testTheDecision_isLoggedWhenTheContextIsMade() async throws {
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 256, threads: 2)
    try await model.prepare()
    let lines = logs.records.filter { $0.category == .local && $0.message.hasPrefix("flash attention") }
    XCTAssertEqual(lines.count, 1)
    XCTAssertEqual(lines.first?.level, .info)
    // Calibrated (or, for an even measurement, the rule): it says which, with the times.
    let message = lines.first?.message ?? ""
    XCTAssertTrue(message.contains("automatic"), message)
    XCTAssertTrue(message.contains("ms/token"), message)
  }

  func testAStoredDecision_isReadBack_withoutCalibrating() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let key = try AttentionCalibrationStore.Key.test("stored")
    AttentionCalibrationStore.store(
      AttentionCalibration.Verdict(flash: true, reason: "on (-8.0%)"), key: key, directory: directory)
    let verdict = await AttentionCalibrationStore().verdict(for: key, directory: directory) {
      XCTFail("calibrated although a decision was stored")
      return AttentionCalibration.Verdict(flash: false, reason: "measured")
    }
    XCTAssertEqual(verdict.flash, true)
    XCTAssertEqual(verdict.reason, "on (-8.0%), stored")
    // A crossing is stored with it.
    AttentionCalibrationStore.store(
      AttentionCalibration.Verdict(flash: true, reason: "on below depth 170", offFromDepth: 170), key: key,
      directory: directory)
    XCTAssertEqual(AttentionCalibrationStore.stored(key: key, directory: directory)?.offFromDepth, 170)
    let mode =
      try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(key.fileName).path)[
        .posixPermissions] as? Int
    XCTAssertEqual(mode, 0o600)
  }

  func testADamagedOrForeignDecisionFile_isCalibratedAgain_andReplaced() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let key = try AttentionCalibrationStore.Key.test("damaged")
    let path = directory.appendingPathComponent(key.fileName)
    let other = try AttentionCalibrationStore.Key.test("other")
    let foreign = try JSONEncoder().encode(
      AttentionCalibrationStore.Record(key: other.text, flash: true, reason: "on"))
    let huge = Data(repeating: 0x20, count: AttentionCalibrationStore.maximumFileBytes + 10)
    let unknownVersion = try JSONEncoder().encode(
      AttentionCalibrationStore.Record(version: 2, key: key.text, flash: true, reason: "on"))
    // A crossing below 1, or on a verdict that is not on, is not one the calibration writes.
    let crossings = try [(true, -1), (true, 0), (false, 100), (nil, 100)].map { flash, depth in
      try JSONEncoder().encode(
        AttentionCalibrationStore.Record(key: key.text, flash: flash, reason: "on", offFromDepth: depth))
    }
    for contents in [Data("{not json".utf8), foreign, huge, unknownVersion, Data()] + crossings {
      try contents.write(to: path)
      let calls = Locked(0)
      let verdict = await AttentionCalibrationStore().verdict(for: key, directory: directory) {
        calls.withLock { $0 += 1 }
        return AttentionCalibration.Verdict(flash: false, reason: "off (+150.0%)")
      }
      XCTAssertEqual(calls.withLock { $0 }, 1)
      XCTAssertEqual(verdict.flash, false)
      XCTAssertEqual(AttentionCalibrationStore.stored(key: key, directory: directory)?.flash, false)
    }
  }

  /// A model value without a prompt cache calibrated first: the next one,
  /// with a directory, still finds the decision written there (the child
  /// process of PromptCacheTests.testSecondProcess_reusesTheFirstProcessCache
  /// calibrated anew, decided otherwise, and so missed the parent's states).
  func testAProcessDecision_isWrittenToEachDirectory_andAStoredOneWins() async throws {
    let store = AttentionCalibrationStore()
    let key = try AttentionCalibrationStore.Key.test("directories")
    let (empty, holding) = (temporaryDirectory(), temporaryDirectory())
    defer { for directory in [empty, holding] { try? FileManager.default.removeItem(at: directory) } }
    AttentionCalibrationStore.store(
      AttentionCalibration.Verdict(flash: false, reason: "off (+40.0%)"), key: key, directory: holding)
    let calls = Locked(0)
    let measure: @Sendable () async -> AttentionCalibration.Verdict = {
      calls.withLock { $0 += 1 }
      return AttentionCalibration.Verdict(flash: true, reason: "on (-8.0%)")
    }
    let alone = await store.verdict(for: key, directory: nil, calibrate: measure)
    let inEmpty = await store.verdict(for: key, directory: empty, calibrate: measure)
    let inHolding = await store.verdict(for: key, directory: holding, calibrate: measure)
    XCTAssertEqual([alone.flash, inEmpty.flash, inHolding.flash], [true, true, false])
    XCTAssertEqual(calls.withLock { $0 }, 1)
    XCTAssertEqual(AttentionCalibrationStore.stored(key: key, directory: empty)?.flash, true)
    XCTAssertEqual(AttentionCalibrationStore.stored(key: key, directory: holding)?.flash, false)
  }

  func testOneProcess_calibratesAKeyOnce_howeverManyAsk() async throws {
    let store = AttentionCalibrationStore()
    let key = try AttentionCalibrationStore.Key.test("once")
    let calls = Locked(0)
    let verdicts = await withTaskGroup(of: Bool?.self) { group in
      for _ in 0..<8 {
        group.addTask {
          await store.verdict(for: key, directory: nil) {
            calls.withLock { $0 += 1 }
            return AttentionCalibration.Verdict(flash: true, reason: "on")
          }.flash
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    XCTAssertEqual(verdicts, Array(repeating: true, count: 8))
    XCTAssertEqual(calls.withLock { $0 }, 1)
  }
}
