import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The default model, SmolLM2-135M-Instruct, answering through the library's
/// own template handling. Greedy, so the answers are repeatable.
final class DefaultModelTests: XCTestCase {
  private let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 48))

  func testCapitalOfFrance_containsParis() async throws {
    // With instructions: without them SmolLM2's own template adds its default
    // system turn ("You are a helpful AI assistant named SmolLM..."), after
    // which the 135M model greedily names a château; phrasing moves it too.
    let session = GenerativeModelSession(
      model: try LocalTestModels.smol(), instructions: "You are a helpful assistant.", logHandler: .silent)
    let response = try await session.respond(to: "What is the capital of France?", options: greedy)
    XCTAssertTrue(response.content.contains("Paris"), response.content)
    XCTAssertEqual(response.rawResponse.modelVersion, LocalSystemModel.modelVersion)
  }

  func testTwoPlusTwo_containsFour() async throws {
    let session = GenerativeModelSession(model: try LocalTestModels.smol(), logHandler: .silent)
    let response = try await session.respond(to: "What is 2+2?", options: greedy)
    XCTAssertTrue(response.content.contains("4"), response.content)
  }

  func testPreferOnDevice_answeredLocally() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: try LocalTestModels.smol(), secondary: cloud), logHandler: .silent)
    let response = try await session.respond(to: "Say hello.", options: greedy)
    XCTAssertEqual(response.rawResponse.modelVersion, "llama-cpp-system-language-model")
    XCTAssertFalse(response.content.isEmpty)
    XCTAssertTrue(cloud.requests.isEmpty)
  }

  func testPreferOnDevice_modelMissing_answeredBySecondary() async throws {
    let missing = LocalSystemModel(modelPath: "/nonexistent/SmolLM2.gguf")
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["cloud answer"])])
    let logs = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: missing, secondary: cloud), logHandler: logs.handler)
    let response = try await session.respond(to: "Hello")
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
    guard case .unavailable(.modelNotReady)? = logs.fallbacks.first?.reason else {
      return XCTFail("fallback not logged as modelNotReady")
    }
  }

  func testMultiTurn_secondTurnReusesTheFirstFromTheKVCache() async throws {
    let session = GenerativeModelSession(
      model: try LocalTestModels.smol(), instructions: "You are a helpful assistant.", logHandler: .silent)
    let first = try await session.respond(to: "Which city is the capital of France?", options: greedy)
    let second = try await session.respond(to: "And of Italy?", options: greedy)
    let reused = second.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0
    XCTAssertGreaterThanOrEqual(reused, first.rawResponse.usageMetadata?.promptTokenCount ?? .max)
    XCTAssertEqual(session.transcript.entries.count, 4)
  }

  /// Decode steps a cancelled stream may still take: the cancel travels from
  /// the caller's task through the session's stream to the turn's flag, which
  /// the scheduler reads before each step.
  static let stepsACancelMayTake = 8

  func testCancellation_stopsDecodingPromptlyAndSessionStaysUsable() async throws {
    let model = try LocalTestModels.smol()
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let long = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .random(top: 40, seed: 1), temperature: 1.2, maximumResponseTokens: 1500))
    let firstText = Mutex<ContinuousClock.Instant?>(nil)
    let task = Task {
      for try await _ in session.streamResponse(to: "Write a very long story about a dragon.", options: long) {
        firstText.withLock { if $0 == nil { $0 = .now } }
      }
    }
    try await waitUntil { firstText.withLock { $0 != nil } }
    task.cancel()
    let stepsAtCancel = try XCTUnwrap(model.batchedContext?.steps.count)
    // Not the caller's await, which returns as soon as the stream ends: the
    // context's own thread must stop computing. Counted in decode steps, not
    // time: without cancellation in the runtime the story runs on for up to
    // 1,500 more, one a token.
    try await waitUntil { model.isIdle }
    let stepsAfter = try XCTUnwrap(model.batchedContext?.steps.count) - stepsAtCancel
    XCTAssertLessThanOrEqual(
      stepsAfter, Self.stepsACancelMayTake, "the context decoded \(stepsAfter) steps after the cancel")
    let outcome = await task.result
    guard case .failure(let error) = outcome else { return XCTFail("the story ended before the cancel reached it") }
    XCTAssertTrue(error is CancellationError, "\(error)")
    try await waitUntil { !session.isResponding }
    let next = try await session.respond(to: "What is 2+2?", options: greedy)
    XCTAssertFalse(next.content.isEmpty)
  }

  func testCancellationDuringLongPrefill_abortsThePrefill() async throws {
    let model = try LocalTestModels.smol(contextSize: 4096)
    try await model.prepare()
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let longPrompt = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 300)
    let options = greedy
    let task = Task { try await session.respond(to: longPrompt, options: options) }
    // The second of the prefill's six batches of 512 has started: well inside it.
    try await waitUntil { (model.batchedContext?.steps.count ?? 0) >= 2 }
    XCTAssertFalse(model.isIdle, "the prefill must still be running when cancelled")
    task.cancel()
    let stepsAtCancel = try XCTUnwrap(model.batchedContext?.steps)
    try await waitUntil { model.isIdle }
    // The batch being computed was abandoned part-way (llama.cpp's abort
    // callback), not run to its end, and no batch started after the cancel.
    let steps = try XCTUnwrap(model.batchedContext?.steps)
    XCTAssertEqual(steps.aborted - stepsAtCancel.aborted, 1, "the prefill's batch was stopped part-way")
    XCTAssertEqual(steps.count, stepsAtCancel.count, "no batch started after the cancel")
    do {
      _ = try await task.value
      XCTFail("the cancelled request must throw")
    } catch {
      XCTAssertTrue(error is CancellationError, "got \(error)")
    }
    try await waitUntil { !session.isResponding }
    let next = try await session.respond(to: "What is 2+2?", options: greedy)
    XCTAssertTrue(next.content.contains("4"), next.content)
  }
}
