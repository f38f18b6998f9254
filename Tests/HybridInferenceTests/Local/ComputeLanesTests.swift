import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// llama.cpp's OpenMP runtime keeps a team per thread that starts parallel
/// work, and once the process holds more such threads than cores it stops
/// spinning at its barriers (decode at a third of llama-bench's). So the
/// contexts of every model share the compute lanes instead of owning a thread.
final class ComputeLanesTests: XCTestCase {
  private let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 4))

  func testContextsOfSeveralModels_runOnSharedLanes_noThreadPerContext() async throws {
    // Four model values, each with a live session holding its own context.
    let models = try (0..<4).map { _ in try LocalTestModels.tiny() }
    var sessions: [GenerativeModelSession] = []
    var threadsAfterFirst = 0
    for model in models {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      _ = try await session.respond(to: "Hello", options: greedy)
      sessions.append(session)
      if threadsAfterFirst == 0 { threadsAfterFirst = try XCTUnwrap(ProcessStatus.read().threads) }
    }
    XCTAssertEqual(models.map { $0.batchedContext?.isCreated }, [true, true, true, true])
    let threads = try XCTUnwrap(ProcessStatus.read().threads)
    // A thread and an OpenMP worker per context used to add six here.
    XCTAssertLessThan(threads - threadsAfterFirst, 3, "threads grew from \(threadsAfterFirst) to \(threads)")
    XCTAssertLessThanOrEqual(ComputeLanes.shared.count, ComputeBudget.shared.cores)
    withExtendedLifetime(sessions) {}
  }
}
