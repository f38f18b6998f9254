import CLlama
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// A burst of sessions starts in one step: a scheduler starting on the first
/// queued turn waits for the turns announced (rendering their prompts), at
/// most its arrival wait, and prefills them together (`TurnAnnouncement`).
final class TurnAnnouncementTests: XCTestCase {
  private final class Owner: Sendable {}

  private static func context(arrivalWait: Duration) async throws -> BatchedContext {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let decision = AttentionChoice.Decision(type: LLAMA_FLASH_ATTN_TYPE_DISABLED, reason: "off (test)")
    return BatchedContext(
      model: model,
      settings: .init(contextSize: 512, batchSize: 64, threads: 1, sequences: 2, flashAttention: decision),
      arrivalWait: arrivalWait)
  }

  /// One token each: the first comes from the prefill's logits, so a turn
  /// takes exactly one step, and two turns prefilled together take one.
  private static func request(_ prompt: [Int32], owner: Owner) -> GenerationRequest {
    GenerationRequest(
      prompt: prompt, shareableTokens: 0, owner: ObjectIdentifier(owner), maximumResponseTokens: 1,
      sampler: { try SamplerChain(options: GenerationOptions(sampling: .greedy)) }, onText: { _ in })
  }

  /// Before: the first turn was prefilled alone as soon as it was queued,
  /// and the second a step later (two steps, neither wider than one turn).
  func testATurnQueuedWhileAnotherIsAnnounced_waitsForIt_andBothTakeOneStep() async throws {
    let context = try await Self.context(arrivalWait: .seconds(60))
    let (first, second) = (Owner(), Owner())
    let announcement = context.announce()
    let earlyRequest = Self.request([1, 2, 3], owner: first)
    let early = Task { try await context.submit(earlyRequest) }
    try await Task.sleep(for: .milliseconds(200))
    XCTAssertEqual(context.steps.count, 0, "nothing is decoded while a turn is announced")
    XCTAssertFalse(context.isIdle, "the scheduler runs, waiting")
    let late = try await context.submit(Self.request([1, 4, 5], owner: second), announcement: announcement)
    let answered = try await early.value
    XCTAssertEqual([answered.generatedTokens, late.generatedTokens].map { $0 <= 1 }, [true, true])
    XCTAssertEqual(context.steps, BatchedContext.Steps(count: 1, widest: 2), "both prefilled in one step")
    withExtendedLifetime((first, second)) {}
  }

  /// A turn that will not come (its render failed) lets the scheduler go at once.
  func testAWithdrawnAnnouncement_releasesTheWaitingScheduler() async throws {
    let context = try await Self.context(arrivalWait: .seconds(60))
    let owner = Owner()
    let announcement = context.announce()
    let start = ContinuousClock.now
    let earlyRequest = Self.request([1, 2, 3], owner: owner)
    let early = Task { try await context.submit(earlyRequest) }
    try await Task.sleep(for: .milliseconds(100))
    announcement.withdraw()
    announcement.withdraw()  // twice: counted once
    _ = try await early.value
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(30), "answered long before the arrival wait ran out")
    XCTAssertEqual(context.state.withLock { $0.announced }, 0)
    XCTAssertEqual(context.steps.count, 1)
    withExtendedLifetime(owner) {}
  }

  /// An announced turn that never comes (a template rendering for its whole
  /// budget) holds the others back for the arrival wait at most.
  func testAnAnnouncementNeverSettled_holdsTheQueueForTheArrivalWaitOnly() async throws {
    let context = try await Self.context(arrivalWait: .milliseconds(300))
    let owner = Owner()
    let announcement = context.announce()
    let start = ContinuousClock.now
    _ = try await context.submit(Self.request([1, 2, 3], owner: owner))
    let waited = ContinuousClock.now - start
    XCTAssertGreaterThanOrEqual(waited, .milliseconds(300), "it waited for the announced turn")
    XCTAssertLessThan(waited, .seconds(30), "then went on without it")
    XCTAssertEqual(context.steps.count, 1)
    announcement.withdraw()
    XCTAssertEqual(context.state.withLock { $0.announced }, 0)
    withExtendedLifetime(owner) {}
  }
}
