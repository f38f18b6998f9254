import Foundation
import HybridInference
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Offline costs one timeout, not one per request (issue 9, point 3).
final class CloudRememberedOfflineTests: CloudTestCase {
  private func cloud(
    _ name: String = "echo", at baseURL: URL, connectTimeout: Duration = .milliseconds(1500),
    remembersOffline: Bool = true
  ) -> CloudGeminiModel {
    CloudGeminiModel(
      name: name, apiKey: GeminiTestServer.apiKey, baseURL: baseURL,
      requestOptions: RequestOptions(
        timeout: .seconds(30), connectTimeout: connectTimeout, retryPolicy: .none,
        remembersOffline: remembersOffline),
      logHandler: .silent)
  }

  private func timed<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
    let start = ContinuousClock.now
    let value = try await body()
    return (value, ContinuousClock.now - start)
  }

  func testAfterAConnectTimeout_theHybridGoesStraightToTheSecondary() async throws {
    let deadLink = try await server.blackholeURL()
    let cloud = cloud(at: deadLink)
    let local = ScriptedModel("local", placement: .onDevice)
    let logs = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)

    let (first, firstTime) = try await timed { try await session.respond(to: "one") }
    XCTAssertEqual(first.rawResponse.modelVersion, "local")
    XCTAssertGreaterThanOrEqual(firstTime, .milliseconds(1400), "the first request pays the connect timeout")
    XCTAssertNotNil(cloud.rememberedFailure)

    let (second, secondTime) = try await timed { try await session.respond(to: "two") }
    XCTAssertEqual(second.rawResponse.modelVersion, "local")
    XCTAssertLessThan(secondTime, .milliseconds(500), "remembered: no connect timeout")
    let (streamed, streamTime) = try await timed { try await session.streamResponse(to: "three").collect() }
    XCTAssertEqual(streamed.rawResponse.modelVersion, "local")
    XCTAssertLessThan(streamTime, .milliseconds(500))

    let reasons = logs.fallbacks.map(\.reason.description)
    XCTAssertEqual(reasons.count, 3)
    XCTAssertTrue(reasons[0].hasPrefix("failed: "), reasons[0])
    XCTAssertEqual(Array(reasons.dropFirst()), ["offline (remembered)", "offline (remembered)"])
    XCTAssertEqual(local.requests.count, 3)
    let message = try XCTUnwrap(logs.records.last?.message)
    XCTAssertTrue(message.hasSuffix("falling back from echo to local: offline (remembered)"), message)

    // Shared by the origin, not the model value: another model on the same server knows too.
    let other = self.cloud("other-model", at: deadLink.appendingPathComponent("some/path"))
    XCTAssertNotNil(other.rememberedFailure)
    // Unless it opted out.
    XCTAssertNil(self.cloud(at: deadLink, remembersOffline: false).rememberedFailure)
  }

  func testOnlyCloud_stillTriesAndThrows() async throws {
    let deadLink = try await server.blackholeURL()
    let cloud = cloud(at: deadLink, connectTimeout: .milliseconds(600))
    let hybrid = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: ScriptedModel("local", placement: .onDevice)),
      logHandler: .silent)
    _ = try await hybrid.respond(to: "learn it")
    XCTAssertNotNil(cloud.rememberedFailure)

    let onlyCloud = GenerativeModelSession(model: cloud, logHandler: .silent)
    let (error, elapsed) = await timed { await captureError { try await onlyCloud.respond(to: "hi") } }
    XCTAssertEqual(offlineError(error)?.code, .timedOut)
    XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(500), "it tried to connect")
  }

  func testWithoutASecondaryThatCanAnswer_theCloudIsAskedAnyway() async throws {
    let port = try closedLoopbackPort()
    let cloud = cloud(at: try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)")))
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    _ = try await session.respond(to: "learn it")
    XCTAssertNotNil(cloud.rememberedFailure)
    local.setAvailability(.unavailable(.modelNotReady))
    let logs = LogRecorder()
    let unavailableLocal = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    let error = await captureError { try await unavailableLocal.respond(to: "hi") }
    guard case .bothModelsFailed(let primary, _)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertEqual(offlineError(primary)?.code, .cannotConnectToHost, "a fresh attempt, not the memory")
    XCTAssertEqual(logs.fallbacks.map(\.reason.description).first?.hasPrefix("failed: "), true)
  }

  func testRecovery_theProbeClearsTheVerdictAndTheCloudAnswersAgain() async throws {
    let port = try closedLoopbackPort()
    let cloud = cloud(at: try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)")))
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let offline = try await session.respond(to: "one")
    XCTAssertEqual(offline.rawResponse.modelVersion, "local")
    XCTAssertNotNil(cloud.rememberedFailure)

    let revived = try GeminiTestServer(port: port)
    defer { revived.stop() }
    // The first probe runs 1 s after the verdict; later ones back off.
    let deadline = ContinuousClock.now + .seconds(10)
    while cloud.rememberedFailure != nil, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    XCTAssertNil(cloud.rememberedFailure, "the probe found the server")
    let back = try await session.respond(to: "two")
    XCTAssertEqual(back.content, "echo: two")
    XCTAssertEqual(local.requests.count, 1)
  }

  func testASuccessfulRequestClearsTheVerdict() async throws {
    // Only-cloud against a live server after the origin was marked: the
    // request reaches it and the memory forgets the verdict at once.
    let port = try closedLoopbackPort()
    let base = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)"))
    let cloud = cloud(at: base)
    _ = try await GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: ScriptedModel("local", placement: .onDevice)),
      logHandler: .silent
    ).respond(to: "learn it")
    XCTAssertNotNil(cloud.rememberedFailure)
    let revived = try GeminiTestServer(port: port)
    defer { revived.stop() }
    let response = try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "hi")
    XCTAssertEqual(response.content, "echo: hi")
    XCTAssertNil(cloud.rememberedFailure)
  }

  func testSwitchedOff_nothingIsRemembered() async throws {
    let port = try closedLoopbackPort()
    let cloud = cloud(at: try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)")), remembersOffline: false)
    let logs = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: ScriptedModel("local", placement: .onDevice)),
      logHandler: logs.handler)
    _ = try await session.respond(to: "one")
    _ = try await session.respond(to: "two")
    XCTAssertNil(cloud.rememberedFailure)
    XCTAssertEqual(logs.fallbacks.filter { $0.reason.description.hasPrefix("failed: ") }.count, 2)
  }
}
