import HybridInference
import XCTest

/// DESIGN.md §2, rule 6: one request at a time; cancellation is prompt and harmless.
final class SessionConcurrencyTests: XCTestCase {
  private let logs = LogRecorder()

  func testSecondRespondWhileRunning_throwsConcurrentRequests() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    local.enqueue(.hang)
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    let first = Task { try await session.respond(to: "one") }
    try await waitUntil { session.isResponding }
    do {
      _ = try await session.respond(to: "two")
      XCTFail("a second request must be refused")
    } catch HybridInferenceError.concurrentRequests {}
    do {
      _ = try await session.streamResponse(to: "three").collect()
      XCTFail("a second stream must be refused")
    } catch HybridInferenceError.concurrentRequests {}
    first.cancel()
    _ = try? await first.value
  }

  func testCancellingCaller_endsGeneration_andSessionStaysUsable() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    local.enqueue(.hang, .answer(["after"]))
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    let task = Task { try await session.respond(to: "long") }
    try await waitUntil { local.requests.count == 1 }
    task.cancel()
    do {
      _ = try await task.value
      XCTFail("must throw")
    } catch {
      XCTAssertTrue(error is CancellationError, "got \(error)")
    }
    try await waitUntil { local.cancellations == 1 }
    XCTAssertFalse(session.isResponding)
    XCTAssertTrue(session.transcript.entries.isEmpty)
    let next = try await session.respond(to: "again")
    XCTAssertEqual(next.content, "after")
  }

  func testBreakingOutOfStream_cancelsGeneration_andSessionStaysUsable() async throws {
    let hanging = ScriptedModel("hang", placement: .onDevice, script: [.hang])
    let streaming = GenerativeModelSession(model: hanging, logHandler: logs.handler)
    let consumer = Task {
      for try await _ in streaming.streamResponse(to: "story") {}
    }
    try await waitUntil { hanging.requests.count == 1 }
    consumer.cancel()
    _ = try? await consumer.value
    try await waitUntil { hanging.cancellations == 1 }
    XCTAssertFalse(streaming.isResponding)
    hanging.enqueue(.answer(["usable"]))
    let again = try await streaming.respond(to: "again")
    XCTAssertEqual(again.content, "usable")
  }

  func testSessionsAreIndependent_concurrentRequestsOnTwoSessionsBothAnswer() async throws {
    let model = ScriptedModel("local", placement: .onDevice)
    let first = GenerativeModelSession(model: model, logHandler: logs.handler)
    let second = GenerativeModelSession(model: model, logHandler: logs.handler)
    async let a = first.respond(to: "a")
    async let b = second.respond(to: "b")
    let (ra, rb) = try await (a, b)
    XCTAssertEqual([ra.content, rb.content], ["local default", "local default"])
  }
}
