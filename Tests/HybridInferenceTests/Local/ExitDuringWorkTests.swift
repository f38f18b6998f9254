import Foundation
import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// An app may exit while llama.cpp is loading a model, creating a context or
/// generating. ggml's C++ statics are then destroyed under the running work;
/// the process must still exit with its own status, not a crash. Each case
/// runs in a child process: this test binary again, with one scenario.
final class ExitDuringWorkTests: XCTestCase {
  func testExitDuringModelLoad_exitsCleanly() throws {
    try assertChildExitsCleanly(scenario: "load")
  }

  func testExitDuringContextCreation_exitsCleanly() throws {
    try assertChildExitsCleanly(scenario: "context")
  }

  func testExitDuringFirstGeneration_exitsCleanly() throws {
    try assertChildExitsCleanly(scenario: "generation")
  }

  func testExitDuringFirstLongPrefill_exitsCleanly() throws {
    try assertChildExitsCleanly(scenario: "prefill")
  }

  private func assertChildExitsCleanly(scenario: String) throws {
    _ = try LocalTestModels.require(LocalTestModels.defaultPath)
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = ["HybridInferenceTests.ExitScenario/testScenario"]
    var environment = ProcessInfo.processInfo.environment
    environment["HYBRID_EXIT_SCENARIO"] = scenario
    child.environment = environment
    let output = Pipe()
    child.standardOutput = output
    child.standardError = output
    try child.run()
    let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    XCTAssertEqual(
      child.terminationReason, .exit, "the child died of a signal during \(scenario):\n\(log.suffix(2000))")
    XCTAssertEqual(child.terminationStatus, 42, "the child's own exit status, during \(scenario):\n\(log.suffix(2000))")
    XCTAssertTrue(
      log.contains("exiting during \(scenario)"), "the scenario reached its exit point:\n\(log.suffix(2000))")
  }
}

/// One scenario of `ExitDuringWorkTests`. Run by itself (no
/// `HYBRID_EXIT_SCENARIO`), it loads, creates a context and generates to
/// the end; in the child it calls `exit(42)` in the middle of one of them.
final class ExitScenario: XCTestCase {
  func testScenario() async throws {
    let scenario = ProcessInfo.processInfo.environment["HYBRID_EXIT_SCENARIO"]
    let model = LocalSystemModel(modelPath: try LocalTestModels.require(LocalTestModels.defaultPath), contextSize: 4096)
    let loading = Atomic<Bool>(false)
    let load = Task { try await model.prepare { _ in loading.store(true, ordering: .relaxed) } }
    if scenario == "load" {
      try await waitUntil { loading.load(ordering: .relaxed) }
      exitNow(during: "load")
    }
    try await load.value
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let texts = Atomic<Int>(0)
    let generation = Task {
      let options = HybridGenerationOptions.foundationModels(
        GenerationOptions(sampling: .greedy, maximumResponseTokens: scenario == nil ? 8 : 400))
      let prompt =
        scenario == "prefill"
        ? String(repeating: "The lighthouse keeper counts the waves. ", count: 300)
        : "Tell me a story about a lighthouse."
      for try await _ in session.streamResponse(to: prompt, options: options) {
        texts.add(1, ordering: .relaxed)
      }
    }
    if scenario == "context" {
      try await waitUntil { !model.isIdle }
      exitNow(during: "context")
    }
    if scenario == "prefill" {
      try await waitUntil { !model.isIdle }
      try await Task.sleep(for: .milliseconds(300))  // inside a prefill of ~3,000 tokens
      exitNow(during: "prefill")
    }
    if scenario == "generation" {
      try await waitUntil { texts.load(ordering: .relaxed) > 0 }
      exitNow(during: "generation")
    }
    try await generation.value
    XCTAssertGreaterThan(texts.load(ordering: .relaxed), 0)
  }

  private func exitNow(during scenario: String) -> Never {
    FileHandle.standardError.write(Data("exiting during \(scenario)\n".utf8))
    exit(42)
  }
}
