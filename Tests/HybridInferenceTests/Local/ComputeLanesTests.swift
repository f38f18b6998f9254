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

  /// `prepare()` makes a context, which computes nothing: it used to do it
  /// on a lane, and a scheduler starting while it held that lane leased a
  /// second one, with an OpenMP team of its own (decode at 0.7x after it).
  func testPrepare_leasesNoComputeLane() async throws {
    // Every lane busy: a lease now would make a new one.
    var held = [try XCTUnwrap(ComputeLanes.shared.lease())]
    while ComputeLanes.shared.count > held.count { held.append(try XCTUnwrap(ComputeLanes.shared.lease())) }
    defer { held.forEach(ComputeLanes.shared.giveBack) }
    let lanes = ComputeLanes.shared.count
    let model = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      flashAttention: .off)
    try await model.prepare()
    XCTAssertEqual(model.batchedContext?.isCreated, true)
    XCTAssertEqual(ComputeLanes.shared.count, lanes, "prepare() leased a lane")
  }

  /// Compute outside a scheduler waits for the budget's cores, so it starts
  /// only once the holder before it has given its lane back.
  func testComputeOutsideAScheduler_waitsForTheCores() async throws {
    let budget = ComputeBudget.shared
    let cores = try await budget.acquire(threads: budget.cores)
    let ran = Locked(false)
    let work = Task { try await ComputeLane.run(threads: 2) { ran.withLock { $0 = true } } }
    try await Task.sleep(for: .milliseconds(200))
    XCTAssertFalse(ran.withLock { $0 }, "ran while every core was taken")
    XCTAssertEqual(budget.waitingCount, 1)
    budget.release(cores)
    try await work.value
    XCTAssertTrue(ran.withLock { $0 })
    XCTAssertEqual(budget.freeCores, budget.cores)
  }

  /// A cancelled caller still waits its turn (the work runs either way;
  /// out of turn it would make a second team).
  func testACancelledCaller_stillWaitsForTheCores() async throws {
    let budget = ComputeBudget.shared
    let cores = try await budget.acquire(threads: budget.cores)
    let ran = Locked(false)
    let work = Task { try await ComputeLane.run(threads: 2) { ran.withLock { $0 = true } } }
    work.cancel()
    try await Task.sleep(for: .milliseconds(200))
    XCTAssertFalse(ran.withLock { $0 }, "a cancelled caller ran while every core was taken")
    budget.release(cores)
    try await work.value
    XCTAssertTrue(ran.withLock { $0 })
    XCTAssertEqual(budget.freeCores, budget.cores)
  }
}
