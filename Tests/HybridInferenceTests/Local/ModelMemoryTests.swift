import HybridInferenceCore
import XCTest

@testable import HybridInferenceLlama

/// `LocalSystemModel.memory` end to end on SmolLM2: weights read in and
/// moved to 2 MiB pages answer exactly as mapped ones, the two are separate
/// loads, and the log says what moved.
final class ModelMemoryTests: XCTestCase {
  private let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 24))

  private func answer(
    _ memory: ModelMemory, _ logs: LogRecorder, path: String? = nil
  ) async throws -> (String, LocalSystemModel) {
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(
      modelPath: try path ?? LocalTestModels.require(LocalTestModels.defaultPath), contextSize: 1024, threads: 2,
      flashAttention: .on, memory: memory)
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let reply = try await session.respond(to: "Name three colours of the sea.", options: greedy)
    return (reply.content, model)
  }

  func testHugePages_answersAsMapped_andMovesTheWeights() async throws {
    let (hugeLogs, mappedLogs) = (LogRecorder(), LogRecorder())
    // A copy is a model of its own (another file identity): loaded here, so
    // its weights move in this test and nowhere before.
    let copy = FileManager.default.temporaryDirectory.appendingPathComponent("memory-\(UUID().uuidString).gguf").path
    try FileManager.default.copyItem(atPath: try LocalTestModels.require(LocalTestModels.defaultPath), toPath: copy)
    defer { try? FileManager.default.removeItem(atPath: copy) }
    let (huge, hugeModel) = try await answer(.hugePages, hugeLogs, path: copy)
    let (mapped, mappedModel) = try await answer(.mapped, mappedLogs)
    XCTAssertFalse(huge.isEmpty)
    XCTAssertEqual(huge, mapped, "the same weights, the same greedy answer")
    let (hugeLoaded, mappedLoaded) = (
      try await hugeModel.loadedModel(progress: nil), try await mappedModel.loadedModel(progress: nil)
    )
    XCTAssertTrue(mappedLoaded !== hugeLoaded, "read in and mapped are two loads")
    XCTAssertFalse(mappedLoaded.weightsInMemory)
    XCTAssertFalse(mappedLogs.records.contains { $0.message.hasPrefix("memory:") }, "mapped asks nothing")
    guard HugePages.collapseWorks else {
      XCTAssertFalse(hugeLoaded.weightsInMemory, "without the kernel's help the weights stay mapped")
      return
    }
    XCTAssertTrue(hugeLoaded.weightsInMemory)
    let line = try XCTUnwrap(hugeLogs.records.map(\.message).first { $0.hasPrefix("memory:") })
    // SmolLM2's 92 MiB of weights: at least 80 MiB in whole aligned 2 MiB
    // pieces (the KV cache stays on 4 KiB pages).
    let moved = try XCTUnwrap(
      line.split(separator: ";").last?.split(separator: " ").first.flatMap { Int($0) }, line)
    XCTAssertGreaterThanOrEqual(moved, 80, line)
    XCTAssertFalse(line.contains("kept on 4 KiB"), line)
  }

  func testAutomatic_readsAModelOfAFewMiBIn_onThisMachine() async throws {
    let logs = LogRecorder()
    let (_, model) = try await answer(.automatic, logs)
    let loaded = try await model.loadedModel(progress: nil)
    XCTAssertEqual(loaded.weightsInMemory, HugePages.collapseWorks, "98 MB against this machine's memory")
    XCTAssertEqual(model.batchedContext?.settings.memory.weightsInMemory, HugePages.collapseWorks)
  }
}
