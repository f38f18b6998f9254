// swift-format-ignore-file
// (The first contract snippet below, the public API, is kept byte for byte.)

import Foundation
import HybridInference
import TestPrerequisites
import XCTest

/// The first contract snippet (the public API, kept byte for byte) compiles against the library
/// and does what its comments say. It runs wherever the default model is
/// provisioned (`make test` does that): prefer-on-device answers on the
/// device, so no key is needed.
///
/// The snippet's `print` is this file's (below): it records each line
/// (`SnippetOutput`), and ends the unbounded story once `storySnapshots`
/// snapshots have come by cancelling the task, as an app would stop reading. The story once ran to
/// the 4,096-token window, 30 s to 226 s of a test run that checked nothing.
final class ContractSnippetTests: XCTestCase {
  /// Enough snapshots to see the text grow, a few seconds of generation.
  static let storySnapshots = 24

  func testDesignSnippetCompilesAndRuns() async throws {
    guard LocalSystemModel.default.isAvailable else {
      throw Prerequisite.missing("the default model (run make test, which provisions it); the snippet compiled")
    }
    let output = SnippetOutput(stoppingAfter: 2 + Self.storySnapshots)
    let run = Task { try await SnippetOutput.$current.withValue(output) { try await contractSnippet() } }
    // A hang guard, not a measure: the answer to the first prompt is bounded
    // only by the context window.
    let hangGuard = Task {
      try await Task.sleep(for: .seconds(300))
      run.cancel()
    }
    let result = await run.result
    hangGuard.cancel()
    let lines = output.lines.map(\.text)
    switch result {
    case .success:
      XCTAssertLessThan(lines.count, 2 + Self.storySnapshots, "the story ended by itself")
    case .failure(let error):
      XCTAssertTrue(error is CancellationError, "the snippet threw \(error)")
      XCTAssertEqual(lines.count, 2 + Self.storySnapshots, "cancelled before the story's snapshots: a hang")
    }
    // The answer says which model it came from: the device, which is available.
    XCTAssertEqual(lines.first, "You used: \(LocalSystemModel.modelVersion)")
    XCTAssertFalse(lines.dropFirst().first?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ?? true, "no answer")
    // Each snapshot is the text so far: it extends the one before.
    let story = Array(lines.dropFirst(2))
    XCTAssertFalse(story.first?.isEmpty ?? true, "no snapshot")
    for (previous, next) in zip(story, story.dropFirst()) {
      XCTAssertTrue(next.hasPrefix(previous), "a snapshot that does not extend the one before: \(previous) -> \(next)")
    }
    XCTAssertGreaterThan(story.last?.count ?? 0, story.first?.count ?? 0, "the story did not grow")
  }
}

/// The snippet's `print` (it shadows the standard library's in this file).
private func print(_ items: Any...) {
  SnippetOutput.current?.record(items)
}

private func contractSnippet() async throws {
  // ---- the first contract snippet, verbatim ----
  // Models
  let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite")   // key from GEMINI_API_KEY or GOOGLE_API_KEY
  let local = LocalSystemModel.default                          // the default on-device model (a GGUF file)

  // Inference modes
  let preferOnDevice = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud))
  let preferCloud    = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: local))
  let onlyOnDevice   = GenerativeModelSession(model: local)
  let onlyCloud      = GenerativeModelSession(model: cloud)

  // Availability of the on-device model
  if LocalSystemModel.default.isAvailable { /* ready */ }
  switch LocalSystemModel.default.availability {
  case .available: break
  case .unavailable(.deviceNotEligible): break         // llama.cpp cannot run here (library missing, CPU or memory too small)
  case .unavailable(.localInferenceNotEnabled): break  // switched off by the app or the user (HYBRID_INFERENCE_DISABLE_LOCAL=1)
  case .unavailable(.modelNotReady): break             // the model file is missing, incomplete or still being fetched
  case .unavailable(let reason): _ = reason            // the enum may grow
  }

  // One request, with per-model options
  let response = try await preferOnDevice.respond(
    to: "Why is the sky blue?",
    options: .hybrid(
      gemini: GenerationConfig(temperature: 0.8, topP: 0.9,
                               thinkingConfig: ThinkingConfig(thinkingLevel: .high)),
      foundationModels: GenerationOptions(sampling: .random(probabilityThreshold: 0.9),
                                          temperature: 0.8)))
  print("You used: \(response.rawResponse.modelVersion)")  // "gemini-3.1-flash-lite" or LocalSystemModel.modelVersion
  print(response.content)

  // Streaming: snapshots as text arrives
  for try await snapshot in preferOnDevice.streamResponse(to: "Tell me a story") {
    print(snapshot.content)            // the text so far
  }
  // ---- end of the snippet ----
  _ = (preferCloud, onlyOnDevice, onlyCloud)
}
