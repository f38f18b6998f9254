import Foundation
import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The offline memory's prober: one at a time per origin, backing off, and
/// cleared by a probe or a request (issue 9, point 3).
final class ReachabilityMemoryTests: XCTestCase {
  /// A scripted probe: fails `failures` times, then succeeds; records when
  /// each probe started and how many ran at once.
  private final class ScriptedProbe: Sendable {
    private struct State {
      var failures: Int
      var starts: [ContinuousClock.Instant] = []
      var running = 0
      var mostAtOnce = 0
    }
    private let state: Mutex<State>

    init(failures: Int) { state = Mutex(State(failures: failures)) }

    var starts: [ContinuousClock.Instant] { state.withLock { $0.starts } }
    var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }

    func probe(_ origin: Origin, _ timeout: Duration) async -> Bool {
      state.withLock { state in
        state.starts.append(.now)
        state.running += 1
        state.mostAtOnce = max(state.mostAtOnce, state.running)
      }
      try? await Task.sleep(for: .milliseconds(5))
      return state.withLock { state in
        state.running -= 1
        state.failures -= 1
        return state.failures < 0
      }
    }
  }

  private let origin = Origin(URL(string: "https://example.com")!)!

  private func waitUntilCleared(_ memory: ReachabilityMemory) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while memory.verdict(for: origin) != nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
  }

  func testOneProberPerOrigin_backingOffUntilTheServerAnswers() async throws {
    let probe = ScriptedProbe(failures: 4)
    let memory = ReachabilityMemory(
      initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(80), probe: probe.probe)
    let recorded = ContinuousClock.now
    for _ in 0..<5 {
      memory.recordOffline(origin, error: URLError(.timedOut), probeTimeout: .seconds(1))
    }
    XCTAssertEqual(memory.verdict(for: origin)?.code, .timedOut)
    try await waitUntilCleared(memory)
    XCTAssertNil(memory.verdict(for: origin))
    let starts = probe.starts
    XCTAssertEqual(starts.count, 5, "four failures, then the one that cleared it")
    XCTAssertEqual(probe.mostAtOnce, 1, "one probe at a time")
    // Each wait is at least the backoff: 20, 40, 80, 80, 80 ms.
    let gaps = zip([recorded] + starts, starts).map { $1 - $0 }
    for (gap, least) in zip(gaps, [20, 40, 80, 80, 80]) {
      XCTAssertGreaterThanOrEqual(gap, .milliseconds(least))
    }
  }

  func testARequestThatConnectsClearsTheVerdict() async throws {
    let probe = ScriptedProbe(failures: .max)
    let memory = ReachabilityMemory(initialBackoff: .seconds(60), probe: probe.probe)
    memory.recordOffline(origin, error: URLError(.cannotConnectToHost), probeTimeout: .seconds(1))
    XCTAssertNotNil(memory.verdict(for: origin))
    memory.recordReachable(origin)
    XCTAssertNil(memory.verdict(for: origin))
    XCTAssertNil(memory.verdict(for: try XCTUnwrap(Origin(URL(string: "https://other.example")!))))
  }
}
