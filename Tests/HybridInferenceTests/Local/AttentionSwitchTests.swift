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

  private let contextSize = 1024

  /// A prompt cache directory holding a calibration that crosses at depth 60.
  private func directoryCrossingAt60(_ path: String) async throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switch-\(UUID().uuidString)")
    let model = LocalSystemModel(modelPath: path, contextSize: contextSize, threads: 2)
    let loaded = try await model.loadedModel(progress: nil)
    let key = AttentionCalibrationStore.Key(
      model: loaded.fingerprint, shape: try XCTUnwrap(AttentionCalibrationGraph.Shape(model: loaded)), threads: 2,
      depths: AttentionCalibration.depths(contextSize: contextSize), pages: loaded.weightsInMemory)
    AttentionCalibrationStore.store(
      AttentionCalibration.Verdict(flash: true, reason: "on below depth 60, off from it", offFromDepth: 60), key: key,
      directory: directory)
    return directory
  }

  /// Whether `log` recorded a state loaded from the prompt cache (then the
  /// cells did not move across in memory).
  private func loadedFromTheCache(_ log: LogRecorder) -> Bool {
    log.records.contains { $0.message.hasPrefix("prompt cache: loaded") }
  }

  private func tokens(_ response: GenerateContentResponse, _ path: KeyPath<UsageMetadata, Int?>) throws -> Int {
    try XCTUnwrap(response.usageMetadata?[keyPath: path])
  }

  func testAConversationPastTheCrossing_goesOnWithoutTheKernel_keepingItsCells() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = try await directoryCrossingAt60(path)
    defer { try? FileManager.default.removeItem(at: directory) }
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    let model = LocalSystemModel(
      modelPath: path, contextSize: contextSize, threads: 2, promptCache: .directory(directory))
    let turns = LogRecorder()
    let session = GenerativeModelSession(model: model, logHandler: turns.handler)
    let first = try await session.respond(to: "Hi.", options: greedy(8))
    let context = try XCTUnwrap(model.batchedContext)
    XCTAssertEqual(context.settings.flashAttention.offFromDepth, 60)
    let held = try tokens(first.rawResponse, \.promptTokenCount)
    XCTAssertLessThan(held, 60, "the first turn must start before the crossing")
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED)
    let question = String(repeating: "Lights along the quay, boats in the harbour. ", count: 8) + "What now?"
    let second = try await session.respond(to: question, options: greedy(8))
    XCTAssertGreaterThanOrEqual(try tokens(second.rawResponse, \.promptTokenCount), 60)
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED, "made again without the kernel")
    XCTAssertGreaterThanOrEqual(
      try tokens(second.rawResponse, \.cachedContentTokenCount), held, "the first exchange moved across")
    XCTAssertFalse(loadedFromTheCache(turns), "moved in memory, not loaded from the prompt cache")
    XCTAssertEqual(context.cellsPerSequence, 512, "the same size: only the setting changed")
    let lines = logs.records.map(\.message).filter { $0.hasPrefix("flash attention") }
    XCTAssertEqual(lines.count, 2, "\(lines)")
    XCTAssertTrue(lines.last?.hasPrefix("flash attention off, a conversation past depth 60: on below depth 60") == true)
    XCTAssertFalse(logs.records.contains { $0.message.contains("refused") }, "\(logs.records.map(\.message))")
    // And the conversation goes on there.
    let third = try await session.respond(to: "And then?", options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
    XCTAssertGreaterThan(try tokens(third.rawResponse, \.cachedContentTokenCount), held)
    XCTAssertFalse(loadedFromTheCache(turns))
    // A new, short conversation takes the one sequence: nothing deep is held, so on again.
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi.", options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED, "on again for a short conversation")
    // And the long one, back on the sequence, is past the crossing again.
    _ = try await session.respond(to: "Go on.", options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
  }

  /// A conversation that passes the crossing keeps one state file: the one
  /// its first turn saved under the other setting's key is a prefix of the
  /// second's, replaced as a turn's state replaces its prefix's under one
  /// key. (It stayed, and a chat that crossed kept two files.)
  func testAConversationPastTheCrossing_keepsOneStateFile() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = try await directoryCrossingAt60(path)
    defer { try? FileManager.default.removeItem(at: directory) }
    func conversations() -> [String] {
      ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix("c.kv") }
    }
    let model = LocalSystemModel(
      modelPath: path, contextSize: contextSize, threads: 2, promptCache: .directory(directory))
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    _ = try await session.respond(to: "Hi.", options: greedy(8))
    XCTAssertEqual(model.batchedContext?.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED)
    XCTAssertEqual(conversations().count, 1, "\(conversations())")
    let question = String(repeating: "Lights along the quay, boats in the harbour. ", count: 8) + "What now?"
    _ = try await session.respond(to: question, options: greedy(8))
    XCTAssertEqual(model.batchedContext?.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
    XCTAssertEqual(conversations().count, 1, "the state saved with the kernel is replaced: \(conversations())")
  }

  /// Two sequences (two sessions that overlapped): when one conversation
  /// passes the crossing, the other's cells, in the context's second
  /// stream or its first, move across rewritten too, and it goes on from them.
  func testWithTwoSequences_theOtherConversationMovesAcrossToo() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = try await directoryCrossingAt60(path)
    defer { try? FileManager.default.removeItem(at: directory) }
    let model = LocalSystemModel(
      modelPath: path, contextSize: contextSize, threads: 2, parallelRequests: 2, promptCache: .directory(directory))
    let (shortLog, longLog) = (LogRecorder(), LogRecorder())
    let short = GenerativeModelSession(model: model, logHandler: shortLog.handler)
    let long = GenerativeModelSession(model: model, logHandler: longLog.handler)
    // Overlapping first turns, until the context has grown to two sequences.
    var opening: GenerativeModelSession.Response?
    let options = greedy(24)
    for attempt in 0..<5 where model.batchedContext?.sequenceCount ?? 1 < 2 {
      async let a = short.respond(to: "Hi \(attempt).", options: options)
      async let b = long.respond(to: "Hello \(attempt).", options: options)
      (opening, _) = try await (a, b)
    }
    let context = try XCTUnwrap(model.batchedContext)
    XCTAssertEqual(context.sequenceCount, 2, "the two sessions' turns overlapped")
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED)
    let held = try tokens(try XCTUnwrap(opening).rawResponse, \.promptTokenCount)
    let question = String(repeating: "Lights along the quay, boats in the harbour. ", count: 10) + "What now?"
    _ = try await long.respond(to: question, options: greedy(8))
    XCTAssertEqual(context.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
    let next = try await short.respond(to: "And?", options: greedy(8))
    XCTAssertGreaterThanOrEqual(try tokens(next.rawResponse, \.cachedContentTokenCount), held)
    XCTAssertFalse(loadedFromTheCache(shortLog), "moved in memory, not loaded from the prompt cache")
  }

  /// The instructions' state was saved while the context was on; a later
  /// model value (a restart) whose first turn starts past the crossing is
  /// off from the start, and loads it rewritten for off instead of decoding it.
  func testAStateSavedWithTheKernel_loadsIntoAContextPastTheCrossing() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let directory = try await directoryCrossingAt60(path)
    defer { try? FileManager.default.removeItem(at: directory) }
    let instructions = "Be brief and kind."
    let first = LocalSystemModel(
      modelPath: path, contextSize: contextSize, threads: 2, promptCache: .directory(directory))
    let opening = try await GenerativeModelSession(model: first, instructions: instructions, logHandler: .silent)
      .respond(to: "Hi.", options: greedy(4))
    XCTAssertEqual(first.batchedContext?.attentionNow, LLAMA_FLASH_ATTN_TYPE_ENABLED)
    XCTAssertLessThan(opening.rawResponse.usageMetadata?.promptTokenCount ?? 99, 60)
    let later = LocalSystemModel(
      modelPath: path, contextSize: contextSize, threads: 2, promptCache: .directory(directory))
    let question = String(repeating: "Lights along the quay, boats in the harbour. ", count: 8) + "What now?"
    let answer = try await GenerativeModelSession(model: later, instructions: instructions, logHandler: .silent)
      .respond(to: question, options: greedy(4))
    XCTAssertEqual(later.batchedContext?.attentionNow, LLAMA_FLASH_ATTN_TYPE_DISABLED)
    XCTAssertGreaterThanOrEqual(
      answer.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, 16, "the instructions' state, rewritten, loaded")
  }
}
