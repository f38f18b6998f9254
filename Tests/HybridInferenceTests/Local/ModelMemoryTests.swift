import HybridInferenceCore
import XCTest

@testable import HybridInferenceLlama

/// `LocalSystemModel.memory` end to end on SmolLM2: weights read in and
/// moved to 2 MiB pages, with the KV cache, answer exactly as mapped ones,
/// the two are separate loads, and the log says what moved.
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
    // pieces; its 1,024-cell KV cache (512 cells made first) at least 2 MiB.
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(Self.mebibytes(of: "weights", in: line), line), 80, line)
    XCTAssertFalse(line.contains("kept on 4 KiB"), line)
    guard HugePages.adviceWorks else { return }
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(Self.mebibytes(of: "KV cache", in: line), line), 2, line)
  }

  /// A second turn longer than the context's first 512 cells makes the
  /// context again and loads the conversation's cells into it: that KV
  /// cache is rehoused with its data, and the answers stay the mapped ones.
  func testAGrownContext_keepsItsCells_onHugePages() async throws {
    let long = String(repeating: "The sea was grey, then green, then blue again. ", count: 60)
    let turns = ["Name three colours of the sea.", long + "What colour was the sea last?"]
    var answers: [ModelMemory: [String]] = [:]
    let hugeLogs = LogRecorder()
    for memory in [ModelMemory.hugePages, .mapped] {
      LocalSystemModel.setLlamaLogHandler(memory == .hugePages ? hugeLogs.handler : LogRecorder().handler)
      defer { LocalSystemModel.setLlamaLogHandler(.silent) }
      let model = LocalSystemModel(
        modelPath: try LocalTestModels.require(LocalTestModels.defaultPath), contextSize: 1024, threads: 2,
        flashAttention: .on, memory: memory)
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      for turn in turns {
        answers[memory, default: []].append(try await session.respond(to: turn, options: greedy).content)
      }
    }
    XCTAssertEqual(answers[.hugePages], answers[.mapped], "the same cells, the same greedy answers")
    guard HugePages.adviceWorks else { return }
    let rehoused = hugeLogs.records.map(\.message).filter { $0.hasPrefix("memory:") }.compactMap {
      Self.mebibytes(of: "KV cache", in: $0)
    }
    XCTAssertGreaterThanOrEqual(rehoused.count, 2, "the first context and the grown one: \(rehoused)")
  }

  /// The MiB a `memory:` line gives for `part` ("weights", "KV cache").
  private static func mebibytes(of part: String, in line: String) -> Int? {
    line.components(separatedBy: "; ").first { $0.hasPrefix(part + " ") }
      .flatMap { $0.dropFirst(part.count + 1).split(separator: " ").first }.flatMap { Int($0) }
  }

  func testAutomatic_readsAModelOfAFewMiBIn_onThisMachine() async throws {
    let logs = LogRecorder()
    let (_, model) = try await answer(.automatic, logs)
    let loaded = try await model.loadedModel(progress: nil)
    XCTAssertEqual(loaded.weightsInMemory, HugePages.collapseWorks, "98 MB against this machine's memory")
    XCTAssertEqual(model.batchedContext?.settings.memory.weightsInMemory, HugePages.collapseWorks)
  }
}
