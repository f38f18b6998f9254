import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The real llama.cpp runtime on the tiny random-weight model.
final class LocalSystemModelTests: XCTestCase {
  func testAvailability_realFileIsAvailable() throws {
    XCTAssertEqual(try LocalTestModels.tiny().availability, .available)
    XCTAssertTrue(try LocalTestModels.tiny().isAvailable)
  }

  func testAvailability_switchedOffByApp() throws {
    let model = LocalSystemModel(modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), isEnabled: false)
    XCTAssertEqual(model.availability, .unavailable(.localInferenceNotEnabled))
  }

  func testAvailability_switchedOffByEnvironment() throws {
    let model = try LocalTestModels.tiny()
    setenv("HYBRID_INFERENCE_DISABLE_LOCAL", "1", 1)
    defer { unsetenv("HYBRID_INFERENCE_DISABLE_LOCAL") }
    XCTAssertEqual(model.availability, .unavailable(.localInferenceNotEnabled))
  }

  func testAvailability_contextTooLargeForMemory_isDeviceNotEligible() throws {
    // A billion tokens is clamped to 2^24 a sequence; 64 sequences of those
    // (256 GiB of the tiny model's KV cache) need more memory than any test machine has.
    let model = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 1_000_000_000, parallelRequests: 64
    )
    XCTAssertEqual(model.availability, .unavailable(.deviceNotEligible))
  }

  func testModelVersionIsTheConstant_andRawResponseCarriesFileNameAndUsage() async throws {
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(), logHandler: .silent)
    let response = try await session.respond(
      to: "Hello", options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 8)))
    XCTAssertEqual(LocalSystemModel.modelVersion, "llama-cpp-system-language-model")
    XCTAssertEqual(response.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    XCTAssertEqual(response.rawResponse.localModelName, "tiny-random-llama")
    let usage = try XCTUnwrap(response.rawResponse.usageMetadata)
    XCTAssertGreaterThan(usage.promptTokenCount ?? 0, 5)
    XCTAssertEqual(usage.totalTokenCount, (usage.promptTokenCount ?? 0) + (usage.candidatesTokenCount ?? 0))
  }

  func testMaximumResponseTokens_isRespected() async throws {
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(), logHandler: .silent)
    for limit in [1, 5, 17] {
      let response = try await session.respond(
        to: "Count",
        options: .foundationModels(GenerationOptions(sampling: .random(top: 50, seed: 7), maximumResponseTokens: limit))
      )
      let generated = try XCTUnwrap(response.rawResponse.usageMetadata?.candidatesTokenCount)
      XCTAssertLessThanOrEqual(generated, limit)
      if generated == limit { XCTAssertEqual(response.rawResponse.finishReason, .maxTokens) }
    }
  }

  func testSameSeedAndPrompt_giveSameText_otherSeedDiffers() async throws {
    let model = try LocalTestModels.tiny()
    func answer(seed: UInt64) async throws -> String {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      return try await session.respond(
        to: "Tell me something",
        options: .foundationModels(
          GenerationOptions(
            sampling: .random(probabilityThreshold: 0.95, seed: seed), temperature: 1.5, maximumResponseTokens: 24))
      ).content
    }
    let first = try await answer(seed: 42)
    let again = try await answer(seed: 42)
    let other = try await answer(seed: 4242)
    XCTAssertEqual(first, again)
    XCTAssertFalse(first.isEmpty)
    XCTAssertNotEqual(first, other)
  }

  func testStreaming_deliversSnapshotsThatGrowToTheFinalAnswer() async throws {
    let model = try LocalTestModels.tiny()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 16))
    let streamed = GenerativeModelSession(model: model, logHandler: .silent)
    var snapshots: [String] = []
    for try await snapshot in streamed.streamResponse(to: "Hi", options: options) {
      snapshots.append(snapshot.content)
    }
    XCTAssertGreaterThan(snapshots.count, 2)
    for (previous, next) in zip(snapshots, snapshots.dropFirst()) {
      XCTAssertTrue(next.hasPrefix(previous))
    }
    let oneShot = try await GenerativeModelSession(model: model, logHandler: .silent).respond(
      to: "Hi", options: options)
    XCTAssertEqual(snapshots.last, oneShot.content, "greedy streaming and one-shot agree")
  }

  func testSecondTurn_prefillsOnlyItsNewTokens() async throws {
    let model = try LocalTestModels.tiny()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
    let session = GenerativeModelSession(model: model, instructions: "Be brief.", logHandler: .silent)
    let first = try await session.respond(to: "First question", options: options)
    let second = try await session.respond(to: "Second", options: options)
    let firstUsage = try XCTUnwrap(first.rawResponse.usageMetadata)
    let secondUsage = try XCTUnwrap(second.rawResponse.usageMetadata)
    XCTAssertEqual(firstUsage.cachedContentTokenCount, 0)
    let reused = try XCTUnwrap(secondUsage.cachedContentTokenCount)
    let prefilled = (secondUsage.promptTokenCount ?? 0) - reused
    // Everything of turn 1 (its prompt) is reused; what is decoded again is the
    // new turn: the end of the answer, the template's markers and "Second".
    XCTAssertGreaterThanOrEqual(reused, firstUsage.promptTokenCount ?? .max)
    let newTurn = try await model.countTokens("<|im_end|>\n<|im_start|>user\nSecond<|im_end|>\n<|im_start|>assistant\n")
    XCTAssertLessThanOrEqual(prefilled, newTurn + (firstUsage.candidatesTokenCount ?? 0))
    XCTAssertGreaterThan(prefilled, 0)
  }

  func testPromptLongerThanOneBatch_isPrefilledInChunksWithTheSameResult() async throws {
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 12))
    let prompt = String(repeating: "chunked prefill ", count: 12)
    let small = LocalSystemModel(modelPath: path, contextSize: 512, threads: 2, batchSize: 8)
    let large = LocalSystemModel(modelPath: path, contextSize: 512, threads: 2, batchSize: 512)
    let chunked = try await GenerativeModelSession(model: small, logHandler: .silent).respond(
      to: prompt, options: options)
    let whole = try await GenerativeModelSession(model: large, logHandler: .silent).respond(
      to: prompt, options: options)
    XCTAssertGreaterThan(chunked.rawResponse.usageMetadata?.promptTokenCount ?? 0, 8 * 10, "many batches of 8")
    XCTAssertEqual(chunked.content, whole.content, "chunking must not change what the model sees")
  }

  func testNewSession_reusesAFinishedSessionsContextAndItsSharedPrefix() async throws {
    let model = try LocalTestModels.tiny()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 4))
    let instructions = String(repeating: "You are a careful assistant. ", count: 8)
    var first: GenerativeModelSession? = GenerativeModelSession(
      model: model, instructions: instructions, logHandler: .silent)
    let opening = try await first?.respond(to: "One", options: options)
    XCTAssertEqual(opening?.rawResponse.usageMetadata?.cachedContentTokenCount, 0)
    first = nil  // its context goes back to the pool, KV cache and all
    try await waitUntil { model.batchedContext?.unownedSequences ?? 0 > 0 }  // once its last reference is gone
    let second = GenerativeModelSession(model: model, instructions: instructions, logHandler: .silent)
    let reply = try await second.respond(to: "Two", options: options)
    // The instructions were already in the pooled context's cache.
    XCTAssertGreaterThan(reply.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, 8 * 5)
    XCTAssertEqual(second.transcript.entries.count, 2, "the new session's own transcript is fresh")
  }

  func testPromptLongerThanContext_throwsContextWindowExceededBeforeDecoding() async throws {
    let session = GenerativeModelSession(model: try LocalTestModels.tiny(contextSize: 64), logHandler: .silent)
    do {
      _ = try await session.respond(to: String(repeating: "long prompt ", count: 60))
      XCTFail("must throw")
    } catch HybridInferenceError.contextWindowExceeded(let size, let tokens) {
      // llama.cpp rounds the window up to a multiple of 256; the error reports the real one.
      XCTAssertEqual(size, 256)
      XCTAssertGreaterThan(tokens, size)
    }
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testPreferOnDevice_promptTooLong_fallsBackToCloud() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["cloud"])])
    let logs = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: try LocalTestModels.tiny(contextSize: 64), secondary: cloud),
      logHandler: logs.handler)
    let response = try await session.respond(to: String(repeating: "long prompt ", count: 60))
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
    guard case .failed(HybridInferenceError.contextWindowExceeded)? = logs.fallbacks.first?.reason else {
      return XCTFail("fallback reason was \(String(describing: logs.fallbacks.first))")
    }
  }

  func testFourSessionsGenerateConcurrentlyOnOneSharedModel() async throws {
    let model = try LocalTestModels.tiny()
    let twin = try LocalTestModels.tiny()
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: 12))
    let answers = try await withThrowingTaskGroup(of: String.self) { group in
      for index in 0..<4 {
        let session = GenerativeModelSession(model: index.isMultiple(of: 2) ? model : twin, logHandler: .silent)
        group.addTask { try await session.respond(to: "Same prompt", options: options).content }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    XCTAssertEqual(answers.count, 4)
    XCTAssertEqual(Set(answers).count, 1, "greedy answers to one prompt agree across sessions")
    let first = try await model.loadedModel(progress: nil)
    let second = try await twin.loadedModel(progress: nil)
    XCTAssertTrue(first === second, "two model values for one file share one loaded model")
  }

  func testCancellingTheBackendsOwnStream_throws() async throws {
    let model = try LocalTestModels.tiny()
    let started = Atomic<Bool>(false)
    let task = Task {
      let request = ModelRequest(
        transcript: Transcript(entries: [.prompt("Go on")]),
        options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 400)))
      for try await _ in model.streamResponse(to: request) {
        started.store(true, ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(1))
      }
    }
    try await waitUntil { started.load(ordering: .relaxed) }
    task.cancel()
    let outcome = await task.result
    guard case .failure(let error) = outcome else { return XCTFail("the backend's stream ended quietly") }
    XCTAssertTrue(error is CancellationError, "\(error)")
  }

  /// `respond` gathers the deltas on the compute lane instead of collecting
  /// the stream: what it returns must be what the stream adds up to.
  func testRespond_isTheStreamAddedUp() async throws {
    let model = try LocalTestModels.tiny()
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt("Go on")]),
      options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 40)))
    var streamed = ResponseAccumulator()
    var deltas = 0
    for try await delta in model.streamResponse(to: request) {
      streamed.add(delta)
      deltas += 1
    }
    let whole = try await model.respond(to: request)
    let added = try XCTUnwrap(streamed.response)
    XCTAssertGreaterThan(deltas, 2, "the stream came in pieces, so the gathering is what is tested")
    XCTAssertFalse(whole.text.isEmpty)
    XCTAssertEqual(whole.text, added.text)
    XCTAssertEqual(whole.candidates.first?.finishReason, added.candidates.first?.finishReason)
    XCTAssertEqual(whole.usageMetadata?.candidatesTokenCount, added.usageMetadata?.candidatesTokenCount)
  }

  func testCancellingTheBackendsOwnRespond_throwsAndStopsTheContext() async throws {
    let model = try LocalTestModels.tiny()
    try await model.prepare()
    let request = ModelRequest(
      transcript: Transcript(entries: [.prompt("Go on")]),
      options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 400)))
    let before = model.batchedContext?.steps.count ?? 0
    let task = Task { try await model.respond(to: request) }
    try await waitUntil { (model.batchedContext?.steps.count ?? 0) >= before + 3 }
    // The cancel sets the turn's flag before `cancel()` returns (the
    // submitting task's cancellation handler); the scheduler reads it before
    // each step, so at most the step it was already starting follows.
    task.cancel()
    let stepsAtCancel = try XCTUnwrap(model.batchedContext?.steps.count)
    try await waitUntil { model.isIdle }
    let stepsAfter = try XCTUnwrap(model.batchedContext?.steps.count) - stepsAtCancel
    XCTAssertLessThanOrEqual(stepsAfter, 1, "the context decoded \(stepsAfter) steps after the cancel")
    let outcome = await task.result
    guard case .failure(let error) = outcome else { return XCTFail("the cancelled respond answered") }
    XCTAssertTrue(error is CancellationError, "\(error)")
  }

  func testPrepare_reportsProgressUpToOne() async throws {
    let progress = LogRecorderValues()
    try await LocalTestModels.tiny().prepare { progress.append($0) }
    XCTAssertEqual(progress.values.last, 1)
  }
}

/// Collects progress values from any thread.
final class LogRecorderValues: Sendable {
  private let storage = Locked<[Double]>([])
  func append(_ value: Double) { storage.withLock { $0.append(value) } }
  var values: [Double] { storage.withLock { $0 } }
}
