import HybridInference
import XCTest

/// The transcript follows the conversation across models (the Architecture
/// article, "Routing rules").
final class ConversationTests: XCTestCase {
  private let logs = LogRecorder()

  func testMultiTurn_fallbackMidConversation_handsFullTranscriptToSecondary() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    local.enqueue(.answer(["Paris."]), .answer(["About 2 million."]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud),
      instructions: "Answer briefly.", logHandler: logs.handler)
    _ = try await session.respond(to: "Capital of France?")
    _ = try await session.respond(to: "Population?")

    local.setAvailability(.unavailable(.modelNotReady))
    cloud.enqueue(.answer(["The Seine."]), .answer(["Yes."]))
    let third = try await session.respond(to: "Which river?")
    XCTAssertEqual(third.rawResponse.modelVersion, "cloud")

    let handed = try XCTUnwrap(cloud.requests.first?.transcript)
    XCTAssertEqual(handed.instructions, "Answer briefly.")
    XCTAssertEqual(
      handed.entries.map(\.text),
      ["Capital of France?", "Paris.", "Population?", "About 2 million.", "Which river?"])
    XCTAssertEqual(handed.entries.map(\.role), [.user, .model, .user, .model, .user])

    // The conversation goes on: the next turn carries the cloud's answer too.
    _ = try await session.respond(to: "Is it long?")
    let fourth = try XCTUnwrap(cloud.requests.last?.transcript)
    XCTAssertEqual(fourth.entries.count, 7)
    XCTAssertEqual(fourth.entries[5].text, "The Seine.")
  }

  func testTranscript_recordsWhichModelProducedEachResponse() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = ScriptedModel("cloud", placement: .cloud)
    local.enqueue(.answer(["one"]), .fail(ScriptedError.decode))
    cloud.enqueue(.answer(["two"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    _ = try await session.respond(to: "first")
    _ = try await session.streamResponse(to: "second").collect()
    let answers = session.transcript.entries.filter { $0.role == .model }
    XCTAssertEqual(answers.map(\.modelVersion), ["local", "cloud"])
    XCTAssertEqual(answers.map(\.text), ["one", "two"])
  }

  func testFailedTurn_leavesTranscriptUnchanged() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    cloud.enqueue(.answer(["ok"]), .fail(ScriptedError.api(400)))
    let session = GenerativeModelSession(model: cloud, logHandler: logs.handler)
    _ = try await session.respond(to: "first")
    let before = session.transcript
    _ = try? await session.respond(to: "second")
    XCTAssertEqual(session.transcript, before)
  }
}
