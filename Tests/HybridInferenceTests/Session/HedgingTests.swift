import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 25, point 3: hedged requests (`HybridModel.hedgeAfter`).
final class HedgingTests: XCTestCase {
  private let logs = LogRecorder()

  private func hedged(
    _ primary: ScriptedModel, _ secondary: ScriptedModel, after delay: Duration = .milliseconds(20),
    tools: [any Tool] = []
  ) -> GenerativeModelSession {
    GenerativeModelSession(
      model: .hybridModel(primary: primary, secondary: secondary, hedgeAfter: delay), tools: tools,
      logHandler: logs.handler)
  }

  func testSlowPrimary_theSecondaryAnswers_andThePrimaryIsCancelledNotIgnored() async throws {
    for streamed in [false, true] {
      let local = ScriptedModel("local", placement: .onDevice, script: [.delayedAnswer(.seconds(30), ["late"])])
      let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["fast", " answer"])])
      let session = hedged(local, cloud)
      let response =
        streamed
        ? try await session.streamResponse(to: "Hi").collect() : try await session.respond(to: "Hi")
      XCTAssertEqual(response.content, "fast answer")
      XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
      XCTAssertEqual(response.rawResponse.fallbackReason, .hedged)
      // Its generation stopped (its wait was cancelled) before the answer returned.
      XCTAssertEqual(local.cancellations, 1)
      XCTAssertEqual(local.endedGenerations, 1)
      XCTAssertEqual(session.transcript.entries.count, 2)
      XCTAssertEqual(session.transcript.entries.last?.text, "fast answer")
    }
    XCTAssertEqual(logs.fallbacks.count, 2)
    guard case .hedged? = logs.fallbacks.first?.reason else {
      return XCTFail("expected a hedged fallback, got \(String(describing: logs.fallbacks.first))")
    }
    XCTAssertTrue(logs.records.contains { $0.message.hasPrefix("hedging: local delivered nothing within") })
  }

  func testTheLoserIsCancelledAsSoonAsTheWinnerDelivers_notWhenItFinishes() async throws {
    let gate = Gate()
    let local = ScriptedModel("local", placement: .onDevice, script: [.delayedAnswer(.seconds(30), ["late"])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answerUntilGate(["first"], gate)])
    let session = hedged(local, cloud)
    var iterator = session.streamResponse(to: "Hi").makeAsyncIterator()
    let first = try await iterator.next()
    XCTAssertEqual(first?.content, "first")
    // The winner is still streaming (held at the gate): the loser has stopped already.
    try await waitUntil(timeout: .seconds(20)) { local.endedGenerations == 1 }
    XCTAssertEqual(local.cancellations, 1)
    gate.open()
    while let snapshot = try await iterator.next() { XCTAssertEqual(snapshot.content, "first") }
  }

  func testFastPrimary_theSecondaryIsNeverAsked() async throws {
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["quick"])])
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let response = try await hedged(local, cloud, after: .seconds(10)).respond(to: "Hi")
    XCTAssertEqual(response.content, "quick")
    XCTAssertNil(response.rawResponse.fallbackReason)
    XCTAssertTrue(cloud.requests.isEmpty)
  }

  func testPrimaryDeliversFirstAfterTheHedgeStarted_theSecondaryIsCancelled() async throws {
    let local = ScriptedModel("local", placement: .onDevice, script: [.delayedAnswer(.milliseconds(150), ["device"])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.delayedAnswer(.seconds(30), ["cloud"])])
    var contents: [String] = []
    let session = hedged(local, cloud, after: .milliseconds(10))
    for try await snapshot in session.streamResponse(to: "Hi") { contents.append(snapshot.content) }
    XCTAssertEqual(contents.last, "device")
    XCTAssertFalse(contents.contains { $0.contains("cloud") })
    XCTAssertEqual(cloud.requests.count, 1, "the hedge was asked")
    XCTAssertEqual(cloud.cancellations, 1)
    XCTAssertEqual(cloud.endedGenerations, 1)
    XCTAssertTrue(logs.fallbacks.isEmpty, "the primary answered: no fallback")
    XCTAssertTrue(logs.records.contains { $0.message == "hedge: local delivered first; cancelled cloud" })
  }

  func testAThoughtCountsAsDelivery_butNotForStructuredOutput() async throws {
    let local = ScriptedModel(
      "local", placement: .onDevice, script: [.thoughtThenAnswer("hmm", .milliseconds(200), ["device"])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.delayedAnswer(.milliseconds(50), ["cloud"])])
    let free = try await hedged(local, cloud, after: .milliseconds(10)).respond(to: "Hi")
    XCTAssertEqual(free.content, "device", "the thought was delivered first")

    let schema = try GenerationSchema(
      jsonSchema: #"{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}"#)
    let slowJSON = ScriptedModel(
      "local", placement: .onDevice, script: [.thoughtThenAnswer("hmm", .seconds(30), [#"{"a": "device"}"#])])
    let fastJSON = ScriptedModel(
      "cloud", placement: .cloud, script: [.delayedAnswer(.milliseconds(50), [#"{"a": "cloud"}"#])])
    let session = hedged(slowJSON, fastJSON, after: .milliseconds(10))
    let structured = try await session.respond(to: "Hi", schema: schema)
    XCTAssertEqual(structured.rawResponse.modelVersion, "cloud", "with a schema only text counts")
    XCTAssertEqual(slowJSON.cancellations, 1)
  }

  func testPrimaryFailsWhileHedging_theSecondaryGoesOn_withTheFailureAsReason() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.offline)])
    let local = ScriptedModel("local", placement: .onDevice, script: [.delayedAnswer(.milliseconds(100), ["device"])])
    let session = GenerativeModelSession(
      model: .hybridModel(
        primary: SlowStart(cloud, by: .milliseconds(40)), secondary: local, hedgeAfter: .milliseconds(5)),
      logHandler: logs.handler)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.content, "device")
    XCTAssertEqual(response.rawResponse.fallbackReason, .offline)
    XCTAssertEqual(local.requests.count, 1, "the hedge already asked is the answer: not asked twice")
    XCTAssertEqual(local.cancellations, 0)
  }

  func testPrimaryFailsWithAnErrorThePolicyKeeps_theHedgeIsCancelled() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.api(400))])
    let local = ScriptedModel("local", placement: .onDevice, script: [.delayedAnswer(.seconds(30), ["device"])])
    let session = GenerativeModelSession(
      model: .hybridModel(
        primary: SlowStart(cloud, by: .milliseconds(40)), secondary: local, hedgeAfter: .milliseconds(5)),
      logHandler: logs.handler)
    let thrown = await captureError { try await session.respond(to: "Hi") }
    XCTAssertEqual(cloudAPIError(thrown)?.httpStatus, 400)
    XCTAssertEqual(local.requests.count, 1)
    XCTAssertEqual(local.cancellations, 1, "a 400 is the app's to see; the hedge stops")
    XCTAssertEqual(local.endedGenerations, 1)
  }

  func testBothFail_theErrorSaysWhatEachFailedWith() async throws {
    let local = ScriptedModel("local", placement: .onDevice, script: [.fail(ScriptedError.decode)])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.api(500))])
    let slow = SlowStart(local, by: .milliseconds(100))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: slow, secondary: cloud, hedgeAfter: .milliseconds(5)), logHandler: .silent)
    let thrown = await captureError { try await session.respond(to: "Hi") }
    guard case .bothModelsFailed(let first, let second)? = thrown as? HybridInferenceError else {
      return XCTFail("expected bothModelsFailed, got \(String(describing: thrown))")
    }
    guard case .generationFailed? = first as? HybridInferenceError else { return XCTFail("\(first)") }
    XCTAssertEqual(cloudAPIError(second)?.httpStatus, 500)
  }

  func testNoHedge_onceAToolHasRun() async throws {
    let weather = WeatherTool()
    let local = ScriptedModel(
      "local", placement: .onDevice,
      script: [.calls([weatherCall("Paris")]), .delayedAnswer(.milliseconds(200), ["Sunny."])])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.delayedAnswer(.seconds(30), ["never"])])
    let session = hedged(local, cloud, after: .milliseconds(100), tools: [weather])
    let response = try await session.respond(to: "Weather?")
    XCTAssertEqual(response.content, "Sunny.")
    XCTAssertTrue(cloud.requests.isEmpty, "the first round answered at once; after the tool no hedge")
  }

  func testNestedHybrids_hedgeAtEachLevel() async throws {
    let slowest = ScriptedModel("a", placement: .onDevice, script: [.delayedAnswer(.seconds(30), ["a"])])
    let slower = ScriptedModel("b", placement: .cloud, script: [.delayedAnswer(.seconds(30), ["b"])])
    let fast = ScriptedModel("c", placement: .cloud, script: [.delayedAnswer(.milliseconds(30), ["c"])])
    let inner = HybridModel(primary: slower, secondary: fast, hedgeAfter: .milliseconds(10))
    let outer = HybridModel(primary: slowest, secondary: inner, hedgeAfter: .milliseconds(10))
    let response = try await GenerativeModelSession(model: outer, logHandler: .silent).respond(to: "Hi")
    XCTAssertEqual(response.content, "c")
    XCTAssertEqual(slowest.cancellations, 1)
    XCTAssertEqual(slower.cancellations, 1)
  }

  func testCancellingTheCaller_stopsBothSides() async throws {
    let local = ScriptedModel("local", placement: .onDevice, script: [.hang])
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.hang])
    let session = hedged(local, cloud, after: .milliseconds(5))
    let task = Task { try await session.respond(to: "Hi") }
    try await waitUntil { cloud.requests.count == 1 }
    task.cancel()
    let thrown = await captureError { try await task.value }
    XCTAssertTrue(thrown is CancellationError, "\(String(describing: thrown))")
    try await waitUntil { !session.isResponding }
    XCTAssertEqual(local.endedGenerations, 1)
    XCTAssertEqual(cloud.endedGenerations, 1)
  }
}

/// A model that waits before it starts: a primary that is slow to fail.
struct SlowStart: LanguageModel {
  let base: ScriptedModel
  let delay: Duration

  init(_ base: ScriptedModel, by delay: Duration) {
    self.base = base
    self.delay = delay
  }

  var modelVersion: String { base.modelVersion }
  var placement: ModelPlacement { base.placement }
  var availability: Availability { base.availability }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    .producing { continuation in
      try await Task.sleep(for: delay)
      for try await delta in base.streamResponse(to: request) { continuation.yield(delta) }
    }
  }
}
