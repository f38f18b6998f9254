import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Sessions on one model value share one llama context, a sequence each, and
/// one scheduler decodes all of them per `llama_decode`: each must still get
/// the answer it gets alone, its own cancellation, its own window and its own
/// KV reuse.
final class BatchedSessionsTests: XCTestCase {
  private struct Ask: Sendable {
    let prompt: String
    let options: GenerationOptions
  }

  /// Different prompt lengths and different sampling: greedy, seeded top-k,
  /// seeded nucleus, greedy again with a long prompt.
  private func asks(tokens: Int) -> [Ask] {
    let long = String(repeating: "The harbour lights came on one by one along the quay. ", count: 12)
    return [
      Ask(prompt: "What is the capital of France?", options: GenerationOptions(sampling: .greedy)),
      Ask(
        prompt: "Write a haiku about autumn.",
        options: GenerationOptions(sampling: .random(top: 40, seed: 7), temperature: 0.7)),
      Ask(
        prompt: "List three fruits and their colours.",
        options: GenerationOptions(sampling: .random(probabilityThreshold: 0.9, seed: 3), temperature: 0.9)),
      Ask(prompt: long + "Summarise this in one sentence.", options: GenerationOptions(sampling: .greedy)),
    ].map { ask in
      var options = ask.options
      options.maximumResponseTokens = tokens
      return Ask(prompt: ask.prompt, options: options)
    }
  }

  /// Each ask has instructions of its own, so no session reuses cells another
  /// computed: a reused prefix computed in another batch can flip a near-tie
  /// (as llama-server's prompt cache can), which is not what is tested here.
  private static func answer(_ ask: Ask, on model: LocalSystemModel) async throws -> String {
    let session = GenerativeModelSession(model: model, instructions: "Answer \(ask.prompt.count).", logHandler: .silent)
    return try await session.respond(to: ask.prompt, options: .foundationModels(ask.options)).content
  }

  private static func answersTogether(_ asks: [Ask], on model: LocalSystemModel) async throws -> [String] {
    try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for (index, ask) in asks.enumerated() {
        group.addTask { (index, try await answer(ask, on: model)) }
      }
      var answers = Array(repeating: "", count: asks.count)
      for try await (index, text) in group { answers[index] = text }
      return answers
    }
  }

  /// At one attention setting: under `.automatic` a context whose deepest
  /// conversation is past the crossing decodes every sequence it holds
  /// without the kernel (an Intel Xeon with AMX crosses at ~45 tokens, so the
  /// short asks ran with it alone and without it beside the long one, and
  /// two near ties went the other way).
  func testFourSessionsDecodedTogether_eachGetsTheTextItGetsAlone() async throws {
    let model = try LocalTestModels.smol(flashAttention: .off)
    let asks = asks(tokens: 16)
    var alone: [String] = []
    for ask in asks { alone.append(try await Self.answer(ask, on: model)) }
    let stepsBefore = try XCTUnwrap(model.batchedContext?.steps)
    XCTAssertEqual(stepsBefore.widest, 1, "one session at a time decodes alone")
    let together = try await Self.answersTogether(asks, on: model)
    let steps = try XCTUnwrap(model.batchedContext?.steps)
    XCTAssertGreaterThanOrEqual(steps.widest, 3, "the sessions must share decode steps")
    XCTAssertLessThan(steps.count - stepsBefore.count, 4 * 17, "fewer steps than four sessions one after another")
    for (index, pair) in zip(alone, together).enumerated() {
      XCTAssertFalse(pair.0.isEmpty)
      XCTAssertEqual(pair.1, pair.0, "session \(index): 16 tokens batched differ from alone")
    }
  }

  func testContextGrowsWhenRequestsOverlap_andTheRunningAnswerGoesOnUnchanged() async throws {
    let model = try LocalTestModels.smol()
    let first = asks(tokens: 48)[3]
    let alone = try await Self.answer(first, on: model)
    XCTAssertEqual(model.batchedContext?.sequenceCount, 1, "one session at a time needs one sequence")
    let started = Locked(false)
    let running = Task {
      let session = GenerativeModelSession(
        model: model, instructions: "Answer \(first.prompt.count).", logHandler: .silent)
      var last = ""
      for try await snapshot in session.streamResponse(to: first.prompt, options: .foundationModels(first.options)) {
        started.withLock { $0 = true }
        last = snapshot.content
      }
      return last
    }
    try await waitUntil { started.withLock { $0 } }
    let others = try await Self.answersTogether(Array(asks(tokens: 8).prefix(3)), on: model)
    XCTAssertEqual(model.batchedContext?.sequenceCount, model.parallelRequests, "overlapping requests grew it")
    XCTAssertTrue(others.allSatisfy { !$0.isEmpty })
    let grownMidAnswer = try await running.value
    XCTAssertEqual(grownMidAnswer, alone, "the running answer is decoded again into the new context and goes on")
  }

  func testBatchedStreams_getTheirTextEveryFewSteps_aLoneStreamEveryStep() async throws {
    let model = try LocalTestModels.smol()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 32))
    @Sendable func stream(_ prompt: String) async throws -> (snapshots: Int, tokens: Int) {
      let session = GenerativeModelSession(model: model, instructions: prompt, logHandler: .silent)
      var snapshots = 0
      var tokens = 0
      for try await snapshot in session.streamResponse(to: prompt, options: options) {
        snapshots += 1
        tokens = snapshot.rawResponse.usageMetadata?.candidatesTokenCount ?? tokens
      }
      return (snapshots, tokens)
    }
    let alone = try await stream("Describe a lighthouse.")
    // A lone stream: a snapshot per token with text (and one for the usage).
    XCTAssertGreaterThan(alone.snapshots, alone.tokens / 2)
    let together = try await withThrowingTaskGroup(of: (snapshots: Int, tokens: Int).self) { group in
      for index in 0..<4 { group.addTask { try await stream("Describe lighthouse number \(index).") } }
      return try await group.reduce(into: [(snapshots: Int, tokens: Int)]()) { $0.append($1) }
    }
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(model.batchedContext?.steps.widest), 3)
    let snapshots = together.map(\.snapshots).reduce(0, +)
    let tokens = together.map(\.tokens).reduce(0, +)
    XCTAssertLessThan(snapshots * 2, tokens, "batched streams are paced (every fourth step), not woken per token")
  }

  func testCancellingOneBatchedSession_leavesTheOthersAnswersAlone() async throws {
    let model = try LocalTestModels.smol()
    let asks = Array(asks(tokens: 24).prefix(3))
    var alone: [String] = []
    for ask in asks { alone.append(try await Self.answer(ask, on: model)) }
    let story = GenerativeModelSession(model: model, logHandler: .silent)
    let long = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .random(top: 40, seed: 1), temperature: 1.2, maximumResponseTokens: 1500))
    let started = Locked(false)
    let cancelled = Task {
      for try await _ in story.streamResponse(to: "Write a very long story about a dragon.", options: long) {
        started.withLock { $0 = true }
      }
    }
    try await waitUntil { started.withLock { $0 } }
    let others = Task { try await BatchedSessionsTests.answersTogether(asks, on: model) }
    try await waitUntil { (model.batchedContext?.steps.widest ?? 0) >= 2 }
    cancelled.cancel()
    do {
      try await cancelled.value
      XCTFail("the cancelled stream must throw")
    } catch {
      XCTAssertTrue(error is CancellationError, "got \(error)")
    }
    let answers = try await others.value
    XCTAssertEqual(answers, alone)
    // Not just the caller's await: the scheduler must stop computing the
    // story. Once the others have their answers, only the story could keep
    // it stepping, up to 1,500 tokens; counted in steps, not time.
    let stepsWhenAnswered = try XCTUnwrap(model.batchedContext?.steps.count)
    try await waitUntil { model.isIdle }
    let stepsAfter = try XCTUnwrap(model.batchedContext?.steps.count) - stepsWhenAnswered
    XCTAssertLessThanOrEqual(stepsAfter, 1, "the context decoded \(stepsAfter) steps for the cancelled story")
    XCTAssertTrue(story.transcript.entries.isEmpty, "a cancelled turn leaves no entry")
  }

  func testATurnOverflowingItsSequence_getsTheTypedError_andTheOthersAnswer() async throws {
    let model = try LocalTestModels.tiny(contextSize: 256)
    let greedy = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
    let long = String(repeating: "overflowing words ", count: 120)
    async let overflowing = GenerativeModelSession(model: model, logHandler: .silent).respond(to: long, options: greedy)
    async let fitting = GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi", options: greedy)
    do {
      _ = try await overflowing
      XCTFail("must throw")
    } catch HybridInferenceError.contextWindowExceeded(let size, let tokens) {
      XCTAssertEqual(size, 256, "the window is the sequence's share, not the whole context")
      XCTAssertGreaterThan(tokens, 256)
    }
    let answer = try await fitting
    XCTAssertEqual(answer.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    XCTAssertGreaterThan(answer.rawResponse.usageMetadata?.candidatesTokenCount ?? 0, 0)
  }

  func testKVReuseAcrossTurns_isCountedPerSession_whileBatched() async throws {
    let model = try LocalTestModels.tiny()
    let greedy = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 6))
    let sessions = (0..<4).map { index in
      GenerativeModelSession(model: model, instructions: "You are assistant \(index).", logHandler: .silent)
    }
    func turn(_ text: String) async throws -> [(prompt: Int, cached: Int)] {
      try await withThrowingTaskGroup(of: (Int, Int, Int).self) { group in
        for (index, session) in sessions.enumerated() {
          group.addTask {
            let usage = try await session.respond(to: "\(text) \(index)", options: greedy).rawResponse.usageMetadata
            return (index, usage?.promptTokenCount ?? 0, usage?.cachedContentTokenCount ?? -1)
          }
        }
        var rows = Array(repeating: (prompt: 0, cached: 0), count: sessions.count)
        for try await (index, prompt, cached) in group { rows[index] = (prompt, cached) }
        return rows
      }
    }
    let first = try await turn("First question")
    let second = try await turn("And a second one")
    for index in sessions.indices {
      XCTAssertEqual(first[index].cached, 0, "session \(index) starts cold")
      // The second turn reuses the whole first exchange but the one token
      // decoded again for fresh logits.
      XCTAssertGreaterThanOrEqual(second[index].cached, first[index].prompt, "session \(index)")
      XCTAssertLessThan(second[index].cached, second[index].prompt)
    }
    XCTAssertGreaterThanOrEqual(try XCTUnwrap(model.batchedContext?.steps.widest), 2)
  }

  /// A turn that reaches its token limit ends as its last token is sampled,
  /// as llama-server's slots do, without a step that decodes that token for
  /// logits nobody reads: the prompt in one step, then a step per further token.
  func testAnAnswerAtItsTokenLimit_takesOneStepPerToken() async throws {
    let model = try LocalTestModels.tiny()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Warm up", options: options)
    let before = try XCTUnwrap(model.batchedContext?.steps.count)
    let reply = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
      to: "Count the steps", options: options)
    XCTAssertEqual(reply.rawResponse.usageMetadata?.candidatesTokenCount, 8)
    XCTAssertEqual(reply.rawResponse.candidates.first?.finishReason, .maxTokens)
    let steps = try XCTUnwrap(model.batchedContext?.steps.count) - before
    XCTAssertEqual(steps, 8, "one step for the prompt, one for each of the 7 tokens after the first")
  }

  func testMoreSessionsThanSequences_waitTheirTurnAndAllAnswer() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let model = LocalSystemModel(modelPath: path, contextSize: 256, threads: 2, parallelRequests: 2)
    let greedy = GenerationOptions(sampling: .greedy, maximumResponseTokens: 12)
    let asks = (0..<7).map { Ask(prompt: "Question number \($0)", options: greedy) }
    let answers = try await Self.answersTogether(asks, on: model)
    XCTAssertEqual(answers.count, 7)
    XCTAssertTrue(answers.allSatisfy { !$0.isEmpty })
    XCTAssertEqual(model.batchedContext?.steps.widest, 2, "never more sequences than the context has")
    try await waitUntil { model.isIdle }  // the scheduler stops once the last answer is out
  }
}
