import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// A context's KV cache starts small and grows with its conversations
/// (`WindowGrowth`): the cells computed so far move to the larger context,
/// so nothing is decoded again, and the answer is the one a context that
/// never grew gives (greedy, token for token).
final class WindowGrowthTests: XCTestCase {
  private func model(contextSize: Int, flash: FlashAttention) throws -> LocalSystemModel {
    LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: contextSize, threads: 2,
      flashAttention: flash)
  }

  private func greedy(_ tokens: Int?) -> HybridGenerationOptions {
    .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
  }

  /// Two turns; the second's prompt and room (450 tokens) pass the first 512
  /// cells, so a 2,048-token window grows before it, moving the first
  /// exchange.
  private func twoTurns(on model: LocalSystemModel) async throws -> (text: String, cached: Int, first: Int) {
    let session = GenerativeModelSession(model: model, instructions: "Be brief.", logHandler: .silent)
    let first = try await session.respond(to: "Tell me about harbours.", options: greedy(40))
    let question = String(repeating: "Lights along the quay. ", count: 4) + "What now?"
    let second = try await session.respond(to: question, options: greedy(450))
    return (
      second.content, second.rawResponse.usageMetadata?.cachedContentTokenCount ?? -1,
      first.rawResponse.usageMetadata?.promptTokenCount ?? 0
    )
  }

  /// The reference never moves a cell of the conversation: a 768-token
  /// window made whole by an earlier, unrelated turn (600 tokens of room),
  /// so both turns run in the cells the grown one ends with.
  func testGrowingBeforeATurn_movesTheConversation_andAnswersAsWithoutGrowing() async throws {
    for flash in [FlashAttention.off, .on] {
      let grown = try model(contextSize: 2048, flash: flash)
      let fixed = try model(contextSize: 768, flash: flash)
      _ = try await GenerativeModelSession(model: fixed, logHandler: .silent).respond(
        to: "Count.", options: greedy(600))
      XCTAssertEqual(fixed.batchedContext?.cellsPerSequence, 768, "flash \(flash): the reference is whole")
      let (grownAnswer, fixedAnswer) = (try await twoTurns(on: grown), try await twoTurns(on: fixed))
      XCTAssertEqual(grown.batchedContext?.cellsPerSequence, 768, "flash \(flash): grown for the second turn")
      XCTAssertEqual(fixed.batchedContext?.cellsPerSequence, 768, "flash \(flash)")
      XCTAssertGreaterThan(grownAnswer.cached, grownAnswer.first, "flash \(flash): the first exchange moved across")
      XCTAssertEqual(grownAnswer.cached, fixedAnswer.cached, "flash \(flash)")
      XCTAssertFalse(grownAnswer.text.isEmpty)
      XCTAssertEqual(grownAnswer.text, fixedAnswer.text, "flash \(flash): the moved cells answer as the unmoved")
    }
  }

  /// An answer with no limit runs past the room reserved at admission (256
  /// tokens): the cache grows between two steps, mid-answer, and the text
  /// goes on as it does where the room was reserved up front (a 1,000-token
  /// limit grows the cache before the first step).
  func testAnAnswerPastItsRoom_growsMidAnswer_andGoesOnUnchanged() async throws {
    let open = try model(contextSize: 2048, flash: .off)
    let reserved = try model(contextSize: 2048, flash: .off)
    let prompt = "Count the harbour lights."
    let unlimited = try await GenerativeModelSession(model: open, logHandler: .silent).respond(
      to: prompt, options: greedy(nil))
    let limited = try await GenerativeModelSession(model: reserved, logHandler: .silent).respond(
      to: prompt, options: greedy(1000))
    let generated = unlimited.rawResponse.usageMetadata?.candidatesTokenCount ?? 0
    XCTAssertGreaterThan(generated, 600, "the tiny model's greedy answer runs long: the test needs it past 512 cells")
    XCTAssertGreaterThan(try XCTUnwrap(open.batchedContext?.cellsPerSequence), 512, "grown mid-answer")
    XCTAssertTrue(
      unlimited.content.hasPrefix(limited.content) || limited.content.hasPrefix(unlimited.content),
      "the answer grown mid-way and the one with room reserved must agree")
    XCTAssertGreaterThan(min(unlimited.content.count, limited.content.count), 100)
  }

  /// Limits at the window's edges, in a child process: a limit of `Int.max`
  /// (the default room), the window less one and the window itself, and a
  /// prompt that leaves no room. Each answers or throws the typed error, the
  /// cache never grows past the window, and the model answers afterwards.
  func testLimitsAtTheWindowsEdges_growAtMostToTheWindow() async throws {
    try await ChildProcess.assertPasses(self) {
      let model = try self.model(contextSize: 1024, flash: .off)
      for limit in [Int.max, 1023, 1024, 1_000_000] {
        do {
          _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
            to: "Count.", options: self.greedy(limit))
        } catch HybridInferenceError.contextWindowExceeded(let size, _) {
          XCTAssertEqual(size, 1024, "limit \(limit)")
        }
        XCTAssertLessThanOrEqual(try XCTUnwrap(model.batchedContext?.cellsPerSequence), 1024, "limit \(limit)")
      }
      let filling = String(repeating: "full ", count: 2000)
      do {
        _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
          to: filling, options: self.greedy(8))
        XCTFail("a prompt past the window answered")
      } catch HybridInferenceError.contextWindowExceeded(let size, _) {
        XCTAssertEqual(size, 1024)
      }
      let after = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
        to: "Hi", options: self.greedy(4))
      XCTAssertEqual(after.rawResponse.modelVersion, LocalSystemModel.modelVersion)
      XCTAssertLessThanOrEqual(try XCTUnwrap(model.batchedContext?.cellsPerSequence), 1024)
    }
  }

  /// A long conversation grows the context; its own next turn keeps the
  /// cells, but a new short conversation on the same model value makes the
  /// context small again (`shrinkWindow`), moving what it keeps (the shared
  /// instructions) across, and answers as a model value that never grew.
  func testANewShortConversation_afterALongOne_shrinksTheContext_andAnswersAsNeverGrown() async throws {
    for flash in [FlashAttention.off, .on] {
      let reused = try model(contextSize: 2048, flash: flash)
      let long = GenerativeModelSession(model: reused, instructions: "Be brief.", logHandler: .silent)
      let opening = try await long.respond(to: String(repeating: "full ", count: 200), options: greedy(8))
      XCTAssertGreaterThan(opening.rawResponse.usageMetadata?.promptTokenCount ?? 0, 700, "the test needs a long turn")
      let grown = try XCTUnwrap(reused.batchedContext?.cellsPerSequence)
      XCTAssertGreaterThanOrEqual(grown, 1024, "flash \(flash): grown by the long turn")
      _ = try await long.respond(to: "And?", options: greedy(8))
      XCTAssertEqual(reused.batchedContext?.cellsPerSequence, grown, "flash \(flash): its own next turn keeps them")

      let short = try await GenerativeModelSession(model: reused, instructions: "Be brief.", logHandler: .silent)
        .respond(to: "Tell me about harbours.", options: greedy(40))
      XCTAssertEqual(reused.batchedContext?.cellsPerSequence, 512, "flash \(flash): made small again")
      XCTAssertGreaterThan(
        short.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, 0,
        "flash \(flash): the shared instructions moved across")
      let fresh = try await GenerativeModelSession(
        model: try model(contextSize: 2048, flash: flash), instructions: "Be brief.", logHandler: .silent
      ).respond(to: "Tell me about harbours.", options: greedy(40))
      XCTAssertFalse(short.content.isEmpty)
      XCTAssertEqual(short.content, fresh.content, "flash \(flash): as a model value that never grew")
    }
  }

  /// A turn's cells are what llama-bench gives the same prompt and answer
  /// (llama.cpp pads every context to 256): the reserved room is the
  /// headroom, none added on top (1,196 tokens made 1,536 cells before).
  func testTheCellsToHoldATurn_areRoundedAsLlamaBenchs_andCappedByTheWindow() {
    XCTAssertEqual(BatchedContext.cells(toHold: 1, window: 4096), 256)
    XCTAssertEqual(BatchedContext.cells(toHold: 256, window: 4096), 256)
    XCTAssertEqual(BatchedContext.cells(toHold: 420, window: 4096), 512)
    XCTAssertEqual(BatchedContext.cells(toHold: 1196, window: 4096), 1280)
    XCTAssertEqual(BatchedContext.cells(toHold: 4000, window: 4096), 4096)
    XCTAssertEqual(BatchedContext.cells(toHold: .max, window: 4096), 4096)
  }
}
