import Foundation
import HybridInference
import XCTest

/// Streaming behaviour: live delivery, failures mid-stream, cancellation.
class CloudStreamingTests: CloudTestCase {
  /// The server waits 2 s between the first and the second event; the first
  /// snapshot must reach the caller long before that, so nothing buffers the
  /// body until its end.
  func testFirstSnapshotArrivesBeforeTheServerSendsTheSecondEvent() async throws {
    let session = self.session("echo~gap-2000")
    let start = ContinuousClock.now
    var arrivals: [Duration] = []
    var contents: [String] = []
    for try await snapshot in session.streamResponse(to: "a streamed answer") {
      arrivals.append(ContinuousClock.now - start)
      contents.append(snapshot.content)
    }
    XCTAssertEqual(arrivals.count, 3)
    XCTAssertLessThan(arrivals[0], .seconds(1), "first snapshot at \(arrivals[0])")
    XCTAssertGreaterThanOrEqual(arrivals[1], .milliseconds(1900), "second snapshot at \(arrivals[1])")
    XCTAssertEqual(contents.last, "echo: a streamed answer")
  }

  func testFixtureStreamWithAGap_deliversItsFirstEventAtOnce() async throws {
    _ = try GeminiTestServer.requireFixtures()
    let session = self.session("fixture-streaming-success-basic-reply-short.txt~gap-1500")
    let start = ContinuousClock.now
    var first: Duration?
    for try await snapshot in session.streamResponse(to: "Wyoming?") where first == nil {
      first = ContinuousClock.now - start
      XCTAssertEqual(snapshot.content, "The")
    }
    XCTAssertLessThan(try XCTUnwrap(first), .seconds(1))
  }

  func testResetMidStream_afterText_endsWithATypedErrorAndIsNotRetried() async throws {
    let name = "fault-reset-mid~\(uniqueID())"
    let result = await collectSnapshots(session(name).streamResponse(to: "hello"))
    XCTAssertEqual(result.snapshots.count, 1, "the text before the reset was delivered")
    XCTAssertEqual(connectionLostError(result.error)?.code, .networkConnectionLost)
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1, "never retried after text")
  }

  func testResetMidBody_unary_isNotRetried_theGenerationMayHaveRun() async throws {
    let name = "fault-reset-mid~\(uniqueID())"
    let error = await captureError { try await self.session(name).respond(to: "hello") }
    XCTAssertEqual(connectionLostError(error)?.code, .networkConnectionLost)
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1, "the server answered half: it ran the request, which must not run twice")
  }

  func testResetBeforeText_afterTheRequestWasSent_isConnectionLost() async throws {
    let session = self.session(
      "fault-reset-before~times-9", requestOptions: RequestOptions(retryPolicy: .none))
    let result = await collectSnapshots(session.streamResponse(to: "hello"))
    XCTAssertTrue(result.snapshots.isEmpty)
    XCTAssertEqual(connectionLostError(result.error)?.code, .networkConnectionLost)
  }

  func testCancellingTheBackendsOwnStream_throws() async throws {
    let model = server.model("fault-slow-body~delay-20000")
    let firstArrived = expectation(description: "first delta")
    let task = Task {
      let request = ModelRequest(transcript: Transcript(entries: [.prompt("hello")]))
      for try await _ in model.streamResponse(to: request) { firstArrived.fulfill() }
    }
    await fulfillment(of: [firstArrived], timeout: 5)
    task.cancel()
    let outcome = await task.result
    guard case .failure(let error) = outcome else { return XCTFail("the backend's stream ended quietly") }
    XCTAssertTrue(error is CancellationError, "\(error)")
  }

  func testCancellingASlowStream_returnsPromptlyAndTheSessionStaysUsable() async throws {
    let name = "fault-slow-body~delay-20000~" + uniqueID()
    let model = server.model(name)
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let firstArrived = expectation(description: "first snapshot")
    let task = Task {
      var count = 0
      for try await _ in session.streamResponse(to: "hello") {
        count += 1
        if count == 1 { firstArrived.fulfill() }
      }
      return count
    }
    await fulfillment(of: [firstArrived], timeout: 5)
    let start = ContinuousClock.now
    task.cancel()
    let outcome = await task.result
    XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500), "cancellation is prompt")
    guard case .failure(let error) = outcome else {
      return XCTFail("a cancelled stream must throw, not end as if complete")
    }
    XCTAssertTrue(error is CancellationError, "\(error)")
    XCTAssertFalse(session.isResponding)
    XCTAssertTrue(session.transcript.entries.isEmpty, "a cancelled turn is not recorded")

    let received = try await server.requestCount(name)
    let unary = Task { try await session.respond(to: "hello") }
    // Cancelled once the server has the request (it sends half the body, then nothing for 20 s).
    let deadline = ContinuousClock.now + .seconds(10)
    while try await server.requestCount(name) == received, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    let unaryStart = ContinuousClock.now
    unary.cancel()
    let unaryOutcome = await unary.result
    XCTAssertLessThan(ContinuousClock.now - unaryStart, .milliseconds(500))
    guard case .failure(let error) = unaryOutcome, error is CancellationError else {
      return XCTFail("a cancelled respond throws CancellationError, got \(unaryOutcome)")
    }
    XCTAssertFalse(session.isResponding, "the session takes the next request")
  }

  func testSessionIsUsableAfterACancelledStream() async throws {
    let session = self.session("echo~delay-600")
    let firstArrived = expectation(description: "first snapshot")
    let task = Task {
      var count = 0
      for try await _ in session.streamResponse(to: "slow") {
        count += 1
        if count == 1 { firstArrived.fulfill() }
      }
    }
    // The next event is 600 ms away: the stream is cancelled in the middle.
    await fulfillment(of: [firstArrived], timeout: 5)
    task.cancel()
    _ = await task.result
    XCTAssertFalse(session.isResponding)
    // The same session, same model, answers the next prompt in full.
    let next = try await session.streamResponse(to: "again").collect()
    XCTAssertTrue(next.content.hasPrefix("echo: again"))
  }
}
