import HybridInference
import XCTest

/// One request at a time per session; cancellation is prompt and harmless
/// (the Architecture article, "Routing rules").
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

  // Issue 20, point 7: the slot is the backend's, not the iteration's.

  func testBreakingOutOfAStream_keepsTheSessionBusyUntilTheBackendHasStopped() async throws {
    let gate = Gate()
    let local = ScriptedModel("local", placement: .onDevice, script: [.answerThenLinger(["Once"], gate)])
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    for try await snapshot in session.streamResponse(to: "A story") {
      XCTAssertEqual(snapshot.content, "Once")
      break
    }
    // The backend is still generating (winding down): a new request must wait.
    let refused = await captureError { try await session.respond(to: "next") }
    XCTAssertTrue(isConcurrentRequests(refused), "\(String(describing: refused))")
    XCTAssertEqual(local.endedGenerations, 0)
    XCTAssertEqual(local.requests.count, 1, "the refused request reached the model")
    gate.open()
    try await waitUntil { local.endedGenerations == 1 }
    try await waitUntil { !session.isResponding }
    local.enqueue(.answer(["after"]))
    let next = try await session.respond(to: "next")
    XCTAssertEqual(next.content, "after")
    XCTAssertTrue(session.transcript.entries.map(\.text).allSatisfy { $0 != "Once" }, "the abandoned turn was recorded")
  }

  func testCancelledStreamOrRespond_keepsTheSessionBusyUntilTheBackendHasStopped() async throws {
    for streams in [true, false] {
      let gate = Gate()
      let local = ScriptedModel("local", placement: .onDevice, script: [.answerThenLinger(["Once"], gate)])
      let session = GenerativeModelSession(model: local, logHandler: logs.handler)
      let consumer = Task {
        if streams {
          for try await _ in session.streamResponse(to: "A story") {}
        } else {
          _ = try await session.respond(to: "A story")
        }
      }
      try await waitUntil { local.requests.count == 1 }
      consumer.cancel()
      // Cancelled, but the backend has not stopped yet.
      try await Task.sleep(for: .milliseconds(50))
      XCTAssertTrue(session.isResponding, "streams: \(streams): the slot was released before the backend stopped")
      let refused = await captureError { try await session.respond(to: "next") }
      XCTAssertTrue(isConcurrentRequests(refused), "streams: \(streams): \(String(describing: refused))")
      gate.open()
      let error = await captureError { try await consumer.value }
      XCTAssertTrue(error is CancellationError, "streams: \(streams): \(String(describing: error))")
      try await waitUntil { local.endedGenerations == 1 && !session.isResponding }
      local.enqueue(.answer(["after"]))
      let next = try await session.respond(to: "next")
      XCTAssertEqual(next.content, "after")
    }
  }
}

private func isConcurrentRequests(_ error: (any Error)?) -> Bool {
  guard case .concurrentRequests? = error as? HybridInferenceError else { return false }
  return true
}
