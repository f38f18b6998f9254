import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 20, point 3: a delta costs what it adds. The figures are in
/// Benchmarks/RESULTS.md; these tests hold the two properties they rest on.
final class StreamingCostTests: XCTestCase {
  /// The session makes a snapshot when the caller asks for one, so a slow
  /// caller never makes it hold a snapshot (a copy of the text) per delta.
  func testSnapshotsAreMadeAsTheCallerAsks_notAhead() async throws {
    let model = ScriptedModel("local", placement: .onDevice, script: [.pulled(count: 1_000, text: "a")])
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    var iterator = session.streamResponse(to: "Go").makeAsyncIterator()
    let first = try await iterator.next()
    XCTAssertEqual(first?.content, "a")
    // Give a session that runs ahead every chance to.
    try await Task.sleep(for: .milliseconds(200))
    XCTAssertLessThanOrEqual(model.pulledDeltas, 2, "the session pulled deltas nobody asked for")
    var count = 1
    while let snapshot = try await iterator.next() {
      count += 1
      XCTAssertEqual(snapshot.content.utf8.count, min(count, 1_000))
    }
    XCTAssertEqual(model.pulledDeltas, 1_001)
  }
}
