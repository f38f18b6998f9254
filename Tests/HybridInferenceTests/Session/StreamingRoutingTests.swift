import HybridInference
import Synchronization
import XCTest

/// Streams fall back only before the first text (the Architecture article, "Routing rules").
final class StreamingRoutingTests: XCTestCase {
  private let logs = LogRecorder()

  func testStreaming_snapshotsAccumulateTextInOrder() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    local.enqueue(.answer(["The", " sky", " is", " blue"]))
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    var contents: [String] = []
    for try await snapshot in session.streamResponse(to: "Why?") {
      contents.append(snapshot.content)
    }
    XCTAssertEqual(contents, ["The", "The sky", "The sky is", "The sky is blue", "The sky is blue"])
  }

  func testStreaming_cancelledMidStream_loopThrowsAndTranscriptLacksTheTurn() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    local.enqueue(.answerThenHang(["Once", " upon"]))
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    let received = Atomic<Int>(0)
    let consumer = Task {
      for try await _ in session.streamResponse(to: "A story") {
        received.add(1, ordering: .relaxed)
      }
    }
    try await waitUntil { received.load(ordering: .relaxed) == 2 }
    consumer.cancel()
    do {
      try await consumer.value
      XCTFail("a cancelled stream must throw, not end as if the answer were complete")
    } catch {
      XCTAssertTrue(error is CancellationError, "got \(error)")
    }
    try await waitUntil { !session.isResponding }
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testStreaming_failureBeforeFirstText_fallsBack() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    local.enqueue(.fail(ScriptedError.decode))
    cloud.enqueue(.answer(["cloud", " text"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    let response = try await session.streamResponse(to: "Hi").collect()
    XCTAssertEqual(response.content, "cloud text")
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
    XCTAssertEqual(logs.fallbacks.count, 1)
  }

  func testStreaming_failureAfterMetadataOnlyDelta_stillFallsBack() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let local = ScriptedModel("local", placement: .onDevice)
    cloud.enqueue(.failAfterMetadata(ScriptedError.offline))
    local.enqueue(.answer(["local text"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    let response = try await session.streamResponse(to: "Hi").collect()
    XCTAssertEqual(response.content, "local text")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
  }

  func testStreaming_failureAfterFirstText_endsStreamWithThatError() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    local.enqueue(.failAfter(["partial"], ScriptedError.decode))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    var seen: [String] = []
    do {
      for try await snapshot in session.streamResponse(to: "Hi") { seen.append(snapshot.content) }
      XCTFail("the stream must end with the error")
    } catch HybridInferenceError.generationFailed {
      XCTAssertEqual(seen, ["partial"])
    }
    XCTAssertTrue(cloud.requests.isEmpty, "no fallback once text was delivered")
    XCTAssertTrue(logs.fallbacks.isEmpty)
    XCTAssertEqual(session.transcript.entries.count, 0, "a failed turn is not recorded")
  }

  func testStreaming_preferCloudApiError_isThrown() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let local = ScriptedModel("local", placement: .onDevice)
    cloud.enqueue(.fail(ScriptedError.api(429)))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    do {
      _ = try await session.streamResponse(to: "Hi").collect()
      XCTFail("must throw")
    } catch HybridInferenceError.cloudAPI(let error) {
      XCTAssertEqual(error.httpStatus, 429)
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testStreaming_primaryUnavailable_streamsFromSecondary() async throws {
    let local = ScriptedModel("local", placement: .onDevice, availability: .unavailable(.modelNotReady))
    let cloud = ScriptedModel("cloud", placement: .cloud)
    cloud.enqueue(.answer(["a", "b"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    var models: Set<String> = []
    for try await snapshot in session.streamResponse(to: "Hi") {
      models.insert(snapshot.rawResponse.modelVersion)
    }
    XCTAssertEqual(models, ["cloud"])
  }
}
