import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Fallback policies beyond the default rule (`FallbackPolicy.default`), and the
/// reason on the response.
final class FallbackPolicyTests: XCTestCase {
  private let logs = LogRecorder()

  private func preferCloud(
    _ cloud: ScriptedModel, _ local: ScriptedModel, _ policy: FallbackPolicy
  ) -> GenerativeModelSession {
    GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, fallback: policy), logHandler: logs.handler)
  }

  private static let rateLimited = HybridInferenceError.cloudAPI(
    CloudAPIError(httpStatus: 429, status: "RESOURCE_EXHAUSTED", message: "quota"))

  func testDesignSection8RoutingLines_compileAsWritten() {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let local = ScriptedModel("local", placement: .onDevice)
    // ---- the third contract snippet, the routing lines (formatted) ----
    let tolerant = HybridModel(
      primary: cloud, secondary: local,
      fallback: FallbackPolicy.default.adding(.rateLimited, .serverError))
    let hedged = HybridModel(primary: local, secondary: cloud, hedgeAfter: .milliseconds(800))
    let resilient = HybridModel(primary: cloud, secondary: local, continuesInterruptedAnswers: true)
    // ---- end ----
    XCTAssertTrue(tolerant.fallback.contains(.rateLimited) && tolerant.fallback.contains(.serverError))
    XCTAssertFalse(tolerant.fallback.contains(.timedOut))
    XCTAssertEqual(hedged.hedgeAfter, .milliseconds(800))
    XCTAssertTrue(resilient.continuesInterruptedAnswers)
    let labelled: HybridModel = .hybridModel(
      primary: cloud, secondary: local, fallback: .default, hedgeAfter: nil, continuesInterruptedAnswers: false)
    XCTAssertEqual(labelled.fallback, .default)
  }

  func testDefaultPolicy_rateLimitServerErrorAndTimeout_areThrown() async throws {
    for error in [Self.rateLimited, ScriptedError.api(503), HybridInferenceError.timedOut(.seconds(1))] {
      let cloud = ScriptedModel("cloud", placement: .cloud, script: [.fail(error)])
      let local = ScriptedModel("local", placement: .onDevice)
      let thrown = await captureError { try await preferCloud(cloud, local, .default).respond(to: "Hi") }
      XCTAssertNotNil(thrown as? HybridInferenceError, "\(error)")
      XCTAssertTrue(local.requests.isEmpty, "\(error) must not fall back under the default policy")
    }
  }

  func testAddedReasons_fallBack_withTheReasonOnTheResponseAndInTheLog() async throws {
    let cases: [(HybridInferenceError, FallbackReason)] = [
      (Self.rateLimited, .rateLimited),
      (.cloudAPI(CloudAPIError(httpStatus: 400, status: "RESOURCE_EXHAUSTED", message: "q")), .rateLimited),
      (ScriptedError.api(500), .serverError), (ScriptedError.api(503), .serverError),
      (.timedOut(.seconds(1)), .timedOut),
      (.connectionLost(URLError(.networkConnectionLost)), .connectionLost),
    ]
    let policy = FallbackPolicy.default.adding(.rateLimited, .serverError, .timedOut, .connectionLost)
    for (error, reason) in cases {
      for streamed in [false, true] {
        let cloud = ScriptedModel("cloud", placement: .cloud, script: [.fail(error)])
        let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["from device"])])
        let session = preferCloud(cloud, local, policy)
        let response =
          streamed
          ? try await session.streamResponse(to: "Hi").collect().rawResponse
          : try await session.respond(to: "Hi").rawResponse
        XCTAssertEqual(response.modelVersion, "local", "\(error)")
        XCTAssertEqual(response.fallbackReason, reason, "\(error)")
      }
    }
    XCTAssertEqual(logs.fallbacks.count, cases.count * 2)
    XCTAssertTrue(logs.records.allSatisfy { $0.message.contains("falling back from cloud to local") })
  }

  func testAddingOneReason_leavesTheOthersThrown() async throws {
    let cloud = ScriptedModel(
      "cloud", placement: .cloud, script: [.fail(ScriptedError.api(503)), .fail(ScriptedError.api(400))])
    let local = ScriptedModel("local", placement: .onDevice)
    let session = preferCloud(cloud, local, .default.adding(.rateLimited))
    let thrown = await captureError { try await session.respond(to: "Hi") }
    XCTAssertEqual(cloudAPIError(thrown)?.httpStatus, 503)
    let bad = await captureError { try await session.respond(to: "Hi") }
    XCTAssertEqual(cloudAPIError(bad)?.httpStatus, 400)
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testDefaultReasons_areOnTheResponse() async throws {
    let offline = ScriptedModel("cloud", placement: .cloud, script: [.fail(ScriptedError.offline)])
    let local = ScriptedModel("local", placement: .onDevice)
    let fromOffline = try await preferCloud(offline, local, .default).respond(to: "Hi")
    XCTAssertEqual(fromOffline.rawResponse.fallbackReason, .offline)

    let failing = ScriptedModel("local", placement: .onDevice, script: [.fail(ScriptedError.decode)])
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let session = GenerativeModelSession(model: .hybridModel(primary: failing, secondary: cloud), logHandler: .silent)
    let fromDevice = try await session.respond(to: "Hi")
    XCTAssertEqual(fromDevice.rawResponse.fallbackReason, .onDeviceFailure)

    let off = ScriptedModel("local", placement: .onDevice, availability: .unavailable(.localInferenceNotEnabled))
    let unavailable = GenerativeModelSession(model: .hybridModel(primary: off, secondary: cloud), logHandler: .silent)
    let fromUnavailable = try await unavailable.respond(to: "Hi")
    XCTAssertEqual(fromUnavailable.rawResponse.fallbackReason, .unavailable)

    let direct = try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "Hi")
    XCTAssertNil(direct.rawResponse.fallbackReason, "no hybrid, no reason")
  }

  func testFallbackReason_isNotPartOfTheRESTEncoding() throws {
    var response = GenerateContentResponse(modelVersion: "m")
    response.fallbackReason = .rateLimited
    response.continuedFrom = "other"
    let json = String(decoding: try JSONEncoder().encode(response), as: UTF8.self)
    XCTAssertFalse(json.contains("fallbackReason") || json.contains("continuedFrom") || json.contains("rate"), json)
  }

  func testAnyPolicy_cancellation_neverFallsBack() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.hang])
    let local = ScriptedModel("local", placement: .onDevice)
    let session = preferCloud(cloud, local, .default.adding(.rateLimited, .serverError, .timedOut, .connectionLost))
    let task = Task { try await session.respond(to: "Hi") }
    try await waitUntil { cloud.requests.count == 1 }
    task.cancel()
    let thrown = await captureError { try await task.value }
    XCTAssertTrue(thrown is CancellationError, "\(String(describing: thrown))")
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testAnyPolicy_afterAToolRan_aRateLimitIsThrown() async throws {
    let weather = WeatherTool()
    let cloud = ScriptedModel(
      "cloud", placement: .cloud, script: [.calls([weatherCall("Paris")]), .fail(Self.rateLimited)])
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, fallback: .default.adding(.rateLimited)),
      tools: [weather], logHandler: .silent)
    let thrown = await captureError { try await session.respond(to: "Weather?") }
    XCTAssertEqual(cloudAPIError(thrown)?.httpStatus, 429)
    XCTAssertEqual(weather.log.all.count, 1)
    XCTAssertTrue(local.requests.isEmpty, "a tool ran: nothing falls back")
  }

  func testNestedHybrids_eachLevelAppliesItsOwnPolicy() async throws {
    // Outer falls back on rate limits, inner does not: the inner's 429 is thrown.
    let first = ScriptedModel("first", placement: .cloud, script: [.fail(Self.rateLimited)])
    let second = ScriptedModel("second", placement: .cloud, script: [.fail(Self.rateLimited)])
    let local = ScriptedModel("local", placement: .onDevice)
    let nested = HybridModel(
      primary: first, secondary: HybridModel(primary: second, secondary: local),
      fallback: .default.adding(.rateLimited))
    let thrown = await captureError {
      try await GenerativeModelSession(model: nested, logHandler: .silent).respond(to: "Hi")
    }
    guard case .bothModelsFailed(_, let inner)? = thrown as? HybridInferenceError else {
      return XCTFail("expected bothModelsFailed, got \(String(describing: thrown))")
    }
    XCTAssertEqual(cloudAPIError(inner)?.httpStatus, 429)
    XCTAssertTrue(local.requests.isEmpty)

    // The other way round: the inner falls back, with its reason on the response.
    let third = ScriptedModel("third", placement: .cloud, script: [.fail(ScriptedError.api(503))])
    let fourth = ScriptedModel("fourth", placement: .cloud, script: [.fail(ScriptedError.api(503))])
    let device = ScriptedModel("device", placement: .onDevice)
    let reversed = HybridModel(
      primary: third,
      secondary: HybridModel(primary: fourth, secondary: device, fallback: .default.adding(.serverError)))
    let direct = await captureError {
      try await GenerativeModelSession(model: reversed, logHandler: .silent).respond(to: "Hi")
    }
    XCTAssertEqual(cloudAPIError(direct)?.httpStatus, 503, "the outer level's default policy throws")
    XCTAssertTrue(fourth.requests.isEmpty)
    let tolerant = HybridModel(
      primary: ScriptedModel("fifth", placement: .cloud, script: [.fail(ScriptedError.api(503))]),
      secondary: device, fallback: .default.adding(.serverError))
    let response = try await GenerativeModelSession(
      model: HybridModel(primary: tolerant, secondary: ScriptedModel("unused", placement: .cloud)), logHandler: .silent
    ).respond(to: "Hi")
    XCTAssertEqual(response.rawResponse.modelVersion, "device")
    XCTAssertEqual(response.rawResponse.fallbackReason, FallbackReason.serverError)
  }
}
