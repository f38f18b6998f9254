import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 25, point 4: an answer whose stream breaks after text goes on on
/// the other model (`HybridModel.continuesInterruptedAnswers`).
final class ContinuedAnswerTests: XCTestCase {
  private let logs = LogRecorder()
  private static let lost = HybridInferenceError.connectionLost(URLError(.networkConnectionLost))

  private func resilient(
    _ primary: ScriptedModel, _ secondary: ScriptedModel, fallback: FallbackPolicy = .default,
    tools: [any Tool] = []
  ) -> GenerativeModelSession {
    GenerativeModelSession(
      model: .hybridModel(
        primary: primary, secondary: secondary, fallback: fallback, continuesInterruptedAnswers: true),
      tools: tools, logHandler: logs.handler)
  }

  func testCloudLinkLost_theDeviceContinuesFromTheTextSoFar_prefilled() async throws {
    for error in [Self.lost, ScriptedError.offline] {
      let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["The sky", " is"], error)])
      let local = ScriptedModel("local", placement: .onDevice, script: [.answer([" blue", "."])])
      let session = resilient(cloud, local)
      var contents: [String] = []
      for try await snapshot in session.streamResponse(to: "Why?") { contents.append(snapshot.content) }
      XCTAssertEqual(contents.first, "The sky")
      XCTAssertEqual(contents.last, "The sky is blue.")
      let request = try XCTUnwrap(local.requests.first)
      XCTAssertEqual(request.continuedAnswer, "The sky is", "the device prefills the text so far")
      XCTAssertEqual(request.transcript.entries.count, 1, "the device gets no extra turns")
      XCTAssertEqual(session.transcript.entries.count, 2, "one answer")
      XCTAssertEqual(session.transcript.entries.last?.text, "The sky is blue.")
      XCTAssertEqual(session.transcript.entries.last?.modelVersion, "local")
    }
    guard case .interrupted? = logs.fallbacks.first?.reason else {
      return XCTFail("expected an interrupted fallback, got \(String(describing: logs.fallbacks.first))")
    }
  }

  func testRawResponse_namesTheModelThatBeganAndTheOneThatFinished() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["Once"], Self.lost)])
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer([" upon a time."])])
    let response = try await resilient(cloud, local).respond(to: "A story")
    XCTAssertEqual(response.content, "Once upon a time.")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
    XCTAssertEqual(response.rawResponse.continuedFrom, "cloud")
    XCTAssertEqual(response.rawResponse.fallbackReason, .connectionLost)
  }

  func testDeviceFails_theCloudGetsTheAnswerAsItsTurnAndAUserTurn_andTheSeamDropsRepeats() async throws {
    let local = ScriptedModel(
      "local", placement: .onDevice, script: [.failAfter(["Paris is the", " capital of"], ScriptedError.decode)])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["capital", " of France", "."])])
    let session = resilient(local, cloud)
    let response = try await session.streamResponse(to: "What is Paris?").collect()
    XCTAssertEqual(response.content, "Paris is the capital of France.")
    let request = try XCTUnwrap(cloud.requests.first)
    XCTAssertNil(request.continuedAnswer)
    let entries = request.transcript.entries
    XCTAssertEqual(entries.count, 3)
    XCTAssertEqual(entries[1].role, .model)
    XCTAssertEqual(entries[1].text, "Paris is the capital of")
    XCTAssertEqual(entries[2].role, .user)
    XCTAssertEqual(entries[2].text, ModelRequest.continuationPrompt)
    XCTAssertEqual(session.transcript.entries.count, 2)
    XCTAssertEqual(session.transcript.entries.last?.text, "Paris is the capital of France.")
  }

  func testSeam_keepsTextThatDoesNotRepeat_andHandlesATrailingSpace() {
    func joined(_ earlier: String, _ next: [String]) -> String {
      var seam = SeamCheck(earlier: earlier)
      for text in next {
        if let out = seam.add(
          GenerateContentResponse(candidates: [Candidate(content: Content(text: text))], modelVersion: "m"))
        {
          return earlier + out
        }
      }
      return earlier + (seam.finish() ?? "")
    }
    XCTAssertEqual(joined("The sky is", [" blue."]), "The sky is blue.")
    XCTAssertEqual(joined("The sky is ", ["is blue."]), "The sky is blue.")
    XCTAssertEqual(joined("The sky is", ["sky is blue."]), "The sky is blue.")
    XCTAssertEqual(joined("The sky is", ["The sky is blue."]), "The sky is blue.")
    XCTAssertEqual(joined("The sky is", ["blue", " and", " wide."]), "The sky isblue and wide.")
    let long = (1...40).map { "w\($0)" }.joined(separator: " ")
    XCTAssertEqual(joined("start", [long]), "start" + long)
  }

  /// Text without spaces (Chinese, Japanese, a long URL) has no words to
  /// count: the seam lets it go once `maximumHeldCharacters` have come
  /// instead of holding the whole answer until the stream ends.
  func testSeam_releasesTextWithoutSpacesAfterALimit() {
    var seam = SeamCheck(earlier: "東京は日本の")
    let piece = String(repeating: "首都です", count: 16)
    var released: String?
    var sent = 0
    while released == nil, sent < 100 {
      released = seam.add(
        GenerateContentResponse(candidates: [Candidate(content: Content(text: piece))], modelVersion: "m"))
      sent += 1
    }
    XCTAssertEqual(released.map { $0.count }, sent * piece.count)
    XCTAssertLessThanOrEqual(sent * piece.count, SeamCheck.maximumHeldCharacters + piece.count)
  }

  func testNeverForAStructuredAnswer() async throws {
    let schema = try GenerationSchema(jsonSchema: #"{"type": "object", "properties": {"a": {"type": "string"}}}"#)
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter([#"{"a": "#], Self.lost)])
    let local = ScriptedModel("local", placement: .onDevice)
    let thrown = await captureError { try await resilient(cloud, local).respond(to: "Hi", schema: schema) }
    XCTAssertNotNil(connectionLostError(thrown))
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testNeverForABlockedAnswerOrAnErrorThePolicyKeeps() async throws {
    let stopped = HybridInferenceError.responseStopped(
      reason: .safety, response: GenerateContentResponse(modelVersion: "cloud"))
    for error in [stopped, ScriptedError.api(400), ScriptedError.api(503)] {
      let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["partial"], error)])
      let local = ScriptedModel("local", placement: .onDevice)
      let thrown = await captureError { try await resilient(cloud, local).respond(to: "Hi") }
      XCTAssertNotNil(thrown as? HybridInferenceError)
      XCTAssertTrue(local.requests.isEmpty, "\(error)")
    }
    // A 503 the policy falls back on is continued.
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["partial"], ScriptedError.api(503))])
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer([" rest"])])
    let response = try await resilient(cloud, local, fallback: .default.adding(.serverError)).respond(to: "Hi")
    XCTAssertEqual(response.content, "partial rest")
    XCTAssertEqual(response.rawResponse.fallbackReason, .serverError)
  }

  func testNeverForACancellation() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answerThenHang(["Once"])])
    let local = ScriptedModel("local", placement: .onDevice)
    let session = resilient(cloud, local)
    let task = Task { try await session.streamResponse(to: "Hi").collect() }
    try await waitUntil { cloud.requests.count == 1 }
    try await Task.sleep(for: .milliseconds(20))
    task.cancel()
    let thrown = await captureError { try await task.value }
    XCTAssertTrue(thrown is CancellationError, "\(String(describing: thrown))")
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testNeverAfterAToolRan() async throws {
    let weather = WeatherTool()
    let cloud = ScriptedModel(
      "cloud", placement: .cloud, script: [.calls([weatherCall("Paris")]), .failAfter(["It is"], Self.lost)])
    let local = ScriptedModel("local", placement: .onDevice)
    let thrown = await captureError { try await resilient(cloud, local, tools: [weather]).respond(to: "Weather?") }
    XCTAssertNotNil(connectionLostError(thrown))
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testOffByDefault_theBreakEndsTheStream() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["partial"], Self.lost)])
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let thrown = await captureError { try await session.streamResponse(to: "Hi").collect() }
    XCTAssertNotNil(connectionLostError(thrown))
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testTheContinuerFailingToo_saysWhatEachFailedWith() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["partial"], Self.lost)])
    let local = ScriptedModel("local", placement: .onDevice, script: [.fail(ScriptedError.decode)])
    let thrown = await captureError { try await resilient(cloud, local).respond(to: "Hi") }
    guard case .bothModelsFailed(let first, let second)? = thrown as? HybridInferenceError else {
      return XCTFail("expected bothModelsFailed, got \(String(describing: thrown))")
    }
    XCTAssertNotNil(connectionLostError(first))
    guard case .generationFailed? = second as? HybridInferenceError else { return XCTFail("\(second)") }
  }

  func testAContinuationThatFails_leavesTheTranscriptAsItWas_andTheNextRequestSendsNoTraceOfIt() async throws {
    let continuers: [ScriptedModel.Step] = [.fail(ScriptedError.decode), .failAfter([" is"], ScriptedError.decode)]
    for continuer in continuers {
      for streamed in [false, true] {
        let cloud = ScriptedModel(
          "cloud", placement: .cloud,
          script: [.answer(["Hello."]), .failAfter(["The sky"], Self.lost), .answer(["Blue."])])
        let local = ScriptedModel("local", placement: .onDevice, script: [continuer])
        let session = resilient(cloud, local)
        _ = try await session.respond(to: "Hi")
        let before = session.transcript
        var delivered: [String] = []
        let thrown = await captureError {
          guard streamed else { return try await session.respond(to: "Why?").content }
          for try await snapshot in session.streamResponse(to: "Why?") { delivered.append(snapshot.content) }
          return delivered.last ?? ""
        }
        XCTAssertTrue(thrown is HybridInferenceError, "\(String(describing: thrown))")
        // Neither the prompt nor the partial answer is kept, as after any failure;
        // a stream has delivered the partial answer to its caller.
        XCTAssertEqual(session.transcript, before, "streamed: \(streamed)")
        if streamed { XCTAssertEqual(delivered.first, "The sky") }
        let response = try await session.respond(to: "Why?")
        XCTAssertEqual(response.content, "Blue.")
        XCTAssertEqual(cloud.requests.last?.transcript.entries, before.entries + [.prompt("Why?")])
        XCTAssertEqual(session.transcript.entries.count, 4)
      }
    }
  }

  func testNested_anInnerHybridPreparesTheContinuationForWhicheverModelItAsks() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["The sky is"], Self.lost)])
    let device = ScriptedModel("device", placement: .onDevice, script: [.fail(ScriptedError.decode)])
    let backup = ScriptedModel("backup", placement: .cloud, script: [.answer(["is blue."])])
    let inner = HybridModel(primary: device, secondary: backup)
    let outer = HybridModel(primary: cloud, secondary: inner, continuesInterruptedAnswers: true)
    let response = try await GenerativeModelSession(model: outer, logHandler: .silent).respond(to: "Why?")
    XCTAssertEqual(response.content, "The sky is blue.")
    XCTAssertEqual(device.requests.first?.continuedAnswer, "The sky is")
    XCTAssertNil(backup.requests.first?.continuedAnswer)
    XCTAssertEqual(backup.requests.first?.transcript.entries.last?.text, ModelRequest.continuationPrompt)
    XCTAssertEqual(response.rawResponse.continuedFrom, "cloud")
    XCTAssertEqual(response.rawResponse.modelVersion, "backup")
  }

  func testAHedgeWinnerThatBreaks_isContinuedByTheSideItBeat() async throws {
    let local = ScriptedModel(
      "local", placement: .onDevice, script: [.delayedAnswer(.seconds(30), ["never"]), .answer([" more."])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.failAfter(["Some"], Self.lost)])
    let session = GenerativeModelSession(
      model: .hybridModel(
        primary: local, secondary: cloud, hedgeAfter: .milliseconds(10), continuesInterruptedAnswers: true),
      logHandler: .silent)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.content, "Some more.")
    XCTAssertEqual(response.rawResponse.continuedFrom, "cloud")
    XCTAssertEqual(local.requests.last?.continuedAnswer, "Some")
  }
}
