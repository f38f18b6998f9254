import CLlama
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
/// runs in a child process (`ChildProcess`: this test binary again, on the
/// same test), which calls `exit(42)` in the middle of that work.
final class ExitDuringWorkTests: XCTestCase {
  func testExitDuringModelLoad_exitsCleanly() async throws {
    try await assertChildExitsCleanly(during: .load)
  }

  func testExitDuringContextCreation_exitsCleanly() async throws {
    try await assertChildExitsCleanly(during: .context)
  }

  func testExitDuringFirstGeneration_exitsCleanly() async throws {
    try await assertChildExitsCleanly(during: .generation)
  }

  func testExitDuringFirstLongPrefill_exitsCleanly() async throws {
    try await assertChildExitsCleanly(during: .prefill)
  }

  /// The races behind a SIGSEGV in libggml-base seen about once in ten
  /// runs of `testExitDuringModelLoad_exitsCleanly`, made likely: work
  /// starts (registering the exit handler) before ggml's backend registry
  /// exists, then short pieces of work that read it start one after another,
  /// as a load that finished just as the exit began and its caller's next
  /// steps do, while the process exits. Before `LlamaBackend.makeLazyStatics`
  /// the registry was made after the handler, so destroyed before it; and
  /// before `InFlightWork.enter` parked work starting during the exit, the
  /// next piece ran on after the handler had returned, under the destructors.
  func testExitWhileTheRegistryIsRead_exitsCleanly() throws {
    if ChildProcess.isChild(of: self) { ExitScenario.readRegistryUntilExit() }
    let exit = try ChildProcess.run(self)
    let log = exit.log.suffix(2000)
    XCTAssertEqual(exit.reason, .exit, "the child died of a signal:\n\(log)")
    XCTAssertEqual(exit.status, 42, "the child's own exit status:\n\(log)")
    XCTAssertTrue(exit.log.contains("exiting during registry reads"), "the scenario reached its exit point:\n\(log)")
  }

  private func assertChildExitsCleanly(during point: ExitScenario.Point) async throws {
    let path = try LocalTestModels.require(LocalTestModels.defaultPath)
    if ChildProcess.isChild(of: self) { try await ExitScenario.run(path: path, exitingDuring: point) }
    let exit = try ChildProcess.run(self)
    let log = exit.log.suffix(2000)
    XCTAssertEqual(exit.reason, .exit, "the child died of a signal during \(point):\n\(log)")
    XCTAssertEqual(exit.status, 42, "the child's own exit status, during \(point):\n\(log)")
    XCTAssertTrue(exit.log.contains("exiting during \(point)"), "the scenario reached its exit point:\n\(log)")
  }
}

/// The child's half of `ExitDuringWorkTests`: loads the default model,
/// creates a context and generates, and calls `exit(42)` in the middle of
/// the one named.
private enum ExitScenario {
  enum Point: String {
    case load, context, generation, prefill
  }

  static func run(path: String, exitingDuring point: Point) async throws -> Never {
    let model = LocalSystemModel(modelPath: path, contextSize: 4096)
    let loading = Atomic<Bool>(false)
    let load = Task { try await model.prepare { _ in loading.store(true, ordering: .relaxed) } }
    if point == .load {
      try await waitUntil { loading.load(ordering: .relaxed) }
      exitNow(during: point)
    }
    try await load.value
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let texts = Atomic<Int>(0)
    Task {
      let options = HybridGenerationOptions.foundationModels(
        GenerationOptions(sampling: .greedy, maximumResponseTokens: 400))
      let prompt =
        point == .prefill
        ? String(repeating: "The lighthouse keeper counts the waves. ", count: 300)
        : "Tell me a story about a lighthouse."
      for try await _ in session.streamResponse(to: prompt, options: options) {
        texts.add(1, ordering: .relaxed)
      }
    }
    switch point {
    case .load:
      break
    case .context:
      try await waitUntil { !model.isIdle }
    case .prefill:
      // The second of the prefill's batches of 512 (about five) has started.
      try await waitUntil { (model.batchedContext?.steps.count ?? 0) >= 2 }
    case .generation:
      try await waitUntil { texts.load(ordering: .relaxed) > 0 }
    }
    exitNow(during: point)
  }

  /// Reads ggml's registry in short pieces of counted work, one after
  /// another on a thread, the first before the registry exists, and exits.
  static func readRegistryUntilExit() -> Never {
    let reads = Atomic<Int>(0)
    let thread = Thread {
      while true {
        LlamaBackend.inFlight.tracked {
          for index in 0..<ggml_backend_reg_count() {
            if let registry = ggml_backend_reg_get(index) {
              _ = ggml_backend_reg_get_proc_address(registry, "ggml_backend_set_n_threads")
            }
          }
          _ = llama_supports_gpu_offload()
        }
        reads.add(1, ordering: .relaxed)
      }
    }
    thread.start()
    while reads.load(ordering: .relaxed) < 1000 { usleep(100) }
    FileHandle.standardError.write(Data("exiting during registry reads\n".utf8))
    exit(42)
  }

  private static func exitNow(during point: Point) -> Never {
    FileHandle.standardError.write(Data("exiting during \(point)\n".utf8))
    exit(42)
  }
}
