import HybridInference
import XCTest

/// The four modes, nested hybrids and the error when both fail: who answers,
/// who falls back, who throws (the Architecture article, "Routing rules").
final class RoutingTests: XCTestCase {
  private let logs = LogRecorder()

  private func makeLocal(_ availability: Availability = .available) -> ScriptedModel {
    ScriptedModel("local", placement: .onDevice, availability: availability)
  }

  private func makeCloud(_ availability: Availability = .available) -> ScriptedModel {
    ScriptedModel("cloud", placement: .cloud, availability: availability)
  }

  // MARK: Rule 1: prefer on-device

  func testPreferOnDevice_localAvailable_answersLocally() async throws {
    let local = makeLocal()
    let cloud = makeCloud()
    local.enqueue(.answer(["Hello", " there"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.content, "Hello there")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
    XCTAssertTrue(cloud.requests.isEmpty)
    XCTAssertTrue(logs.fallbacks.isEmpty)
  }

  func testPreferOnDevice_localUnavailable_answersFromCloudAndLogsReason() async throws {
    let local = makeLocal(.unavailable(.modelNotReady))
    let cloud = makeCloud()
    cloud.enqueue(.answer(["From the cloud"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.content, "From the cloud")
    XCTAssertEqual(response.rawResponse.modelVersion, "cloud")
    XCTAssertTrue(local.requests.isEmpty, "an unavailable model must not be asked")
    let fallback = try XCTUnwrap(logs.fallbacks.first)
    XCTAssertEqual(fallback.from, "local")
    XCTAssertEqual(fallback.to, "cloud")
    guard case .unavailable(.modelNotReady) = fallback.reason else {
      return XCTFail("fallback reason was \(fallback.reason)")
    }
  }

  func testPreferOnDevice_eachLocalFailure_fallsBackToCloudAndIsLogged() async throws {
    let failures: [HybridInferenceError] = [
      .unsupportedRequest("images are not supported"),
      .contextWindowExceeded(contextSize: 2048, tokenCount: 4000),
      .generationFailed("llama_decode returned -1"),
      .invalidModelFile(path: "/models/x.gguf", reason: "truncated"),
    ]
    for failure in failures {
      let local = makeLocal()
      let cloud = makeCloud()
      let logs = LogRecorder()
      local.enqueue(.fail(failure))
      cloud.enqueue(.answer(["cloud answer"]))
      let session = GenerativeModelSession(
        model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
      let response = try await session.respond(to: "Hi")
      XCTAssertEqual(response.rawResponse.modelVersion, "cloud", "after \(failure)")
      XCTAssertEqual(logs.fallbacks.count, 1, "after \(failure)")
      guard case .failed(let logged)? = logs.fallbacks.first?.reason,
        "\(logged)" == "\(failure)"
      else { return XCTFail("fallback after \(failure) not logged with its reason") }
    }
  }

  func testPreferOnDevice_cancellation_doesNotFallBack() async throws {
    let local = makeLocal()
    let cloud = makeCloud()
    local.enqueue(.hang)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    let task = Task { try await session.respond(to: "Hi") }
    try await waitUntil { local.requests.count == 1 }
    task.cancel()
    do {
      _ = try await task.value
      XCTFail("a cancelled request must throw")
    } catch {
      XCTAssertTrue(error is CancellationError, "got \(error)")
    }
    XCTAssertTrue(cloud.requests.isEmpty, "cancellation is never a reason to fall back")
    XCTAssertTrue(logs.fallbacks.isEmpty)
  }

  // MARK: Rule 2: prefer cloud

  func testPreferCloud_offline_fallsBackToLocal() async throws {
    let local = makeLocal()
    let cloud = makeCloud()
    cloud.enqueue(.fail(ScriptedError.offline))
    local.enqueue(.answer(["local answer"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.content, "local answer")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
    XCTAssertEqual(logs.fallbacks.map(\.from), ["cloud"])
  }

  func testPreferCloud_apiErrors_areThrownNotMaskedByFallback() async throws {
    for status in [400, 403, 404, 429, 500, 503] {
      let local = makeLocal()
      let cloud = makeCloud()
      cloud.enqueue(.fail(ScriptedError.api(status)))
      let session = GenerativeModelSession(
        model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
      do {
        _ = try await session.respond(to: "Hi")
        XCTFail("a \(status) must be thrown")
      } catch HybridInferenceError.cloudAPI(let error) {
        XCTAssertEqual(error.httpStatus, status)
      }
      XCTAssertTrue(local.requests.isEmpty, "\(status) must not fall back")
    }
    XCTAssertTrue(logs.fallbacks.isEmpty)
  }

  func testPreferCloud_blockedPrompt_isThrownNotMasked() async throws {
    let local = makeLocal()
    let cloud = makeCloud()
    let blocked = GenerateContentResponse(
      promptFeedback: PromptFeedback(blockReason: .safety), modelVersion: "cloud")
    cloud.enqueue(.fail(HybridInferenceError.promptBlocked(reason: .safety, response: blocked)))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("a blocked prompt must be thrown")
    } catch HybridInferenceError.promptBlocked(let reason, _) {
      XCTAssertEqual(reason, .safety)
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testPreferCloud_cloudUnavailable_fallsBackToLocal() async throws {
    let local = makeLocal()
    let cloud = makeCloud(.unavailable(.missingAPIKey))
    local.enqueue(.answer(["local"]))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
    XCTAssertEqual(logs.fallbacks.count, 1)
  }

  // MARK: Rule 3: only X

  func testOnlyOnDevice_unavailable_throwsTypedErrorWithoutAskingIt() async throws {
    let local = makeLocal(.unavailable(.localInferenceNotEnabled))
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("must throw")
    } catch HybridInferenceError.unavailable(let model, let reason) {
      XCTAssertEqual(model, "local")
      XCTAssertEqual(reason, .localInferenceNotEnabled)
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testOnlyOnDevice_failure_throwsItsOwnError() async throws {
    let local = makeLocal()
    local.enqueue(.fail(ScriptedError.decode))
    let session = GenerativeModelSession(model: local, logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("must throw")
    } catch HybridInferenceError.generationFailed(let why) {
      XCTAssertTrue(why.contains("llama_decode"))
    }
    XCTAssertTrue(logs.fallbacks.isEmpty)
  }

  func testOnlyCloud_offline_throwsOfflineNeverFallsBack() async throws {
    let cloud = makeCloud()
    cloud.enqueue(.fail(ScriptedError.offline))
    let session = GenerativeModelSession(model: cloud, logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("must throw")
    } catch HybridInferenceError.offline(let urlError) {
      XCTAssertEqual(urlError.code, .cannotConnectToHost)
    }
  }

  func testOnlyCloud_unavailable_throwsUnavailable() async throws {
    let session = GenerativeModelSession(
      model: makeCloud(.unavailable(.missingAPIKey)), logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("must throw")
    } catch HybridInferenceError.unavailable(_, let reason) {
      XCTAssertEqual(reason, .missingAPIKey)
    }
  }

  // MARK: Both fail, nesting

  func testBothModelsFail_errorCarriesEachFailure() async throws {
    let local = makeLocal()
    let cloud = makeCloud()
    local.enqueue(.fail(ScriptedError.decode))
    cloud.enqueue(.fail(ScriptedError.api(500)))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("must throw")
    } catch HybridInferenceError.bothModelsFailed(let primary, let secondary) {
      guard case .generationFailed? = primary as? HybridInferenceError else {
        return XCTFail("primary error was \(primary)")
      }
      guard case .cloudAPI(let api)? = secondary as? HybridInferenceError else {
        return XCTFail("secondary error was \(secondary)")
      }
      XCTAssertEqual(api.httpStatus, 500)
    }
  }

  func testBothUnavailable_errorSaysWhyEachIsUnavailable() async throws {
    let local = makeLocal(.unavailable(.modelNotReady))
    let cloud = makeCloud(.unavailable(.missingAPIKey))
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: cloud), logHandler: logs.handler)
    do {
      _ = try await session.respond(to: "Hi")
      XCTFail("must throw")
    } catch let error as HybridInferenceError {
      let text = error.description
      XCTAssertTrue(text.contains("missing or not ready") && text.contains("API key"), text)
    }
  }

  func testNestedHybrid_fallsThroughToThirdModel() async throws {
    let local = makeLocal(.unavailable(.deviceNotEligible))
    let cloud = makeCloud()
    let spare = ScriptedModel("spare", placement: .cloud)
    cloud.enqueue(.fail(ScriptedError.offline))
    spare.enqueue(.answer(["spare answer"]))
    let inner = HybridModel(primary: cloud, secondary: spare)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: local, secondary: inner), logHandler: logs.handler)
    let response = try await session.respond(to: "Hi")
    XCTAssertEqual(response.rawResponse.modelVersion, "spare")
    XCTAssertEqual(logs.fallbacks.map(\.from), ["local", "cloud"])
  }
}

/// Polls `condition` until it holds or `timeout` passes. Generous by default:
/// this waits for something to happen, it does not measure how fast.
func waitUntil(timeout: Duration = .seconds(60), _ condition: @Sendable () -> Bool) async throws {
  let deadline = ContinuousClock.now + timeout
  while !condition() && ContinuousClock.now < deadline {
    try await Task.sleep(for: .milliseconds(5))
  }
  XCTAssertTrue(condition(), "condition did not hold in time")
}
