import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 25 against real backends: the loopback Gemini server and the tiny
/// on-device model.
final class RoutingLoopbackTests: CloudTestCase {
  private let logs = LogRecorder()

  /// Options with no retries, so a 429 is thrown at once.
  private let once = RequestOptions(timeout: .seconds(20), connectTimeout: .seconds(5), retryPolicy: .none)

  func testCutStream_theTinyDeviceModelFinishesTheAnswer() async throws {
    let cloud = server.model("fault-unfinished~body-chunked-cut~\(uniqueID())")
    let local = try LocalTestModels.tiny()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, continuesInterruptedAnswers: true),
      logHandler: logs.handler)
    let prompt = "tell me about the sky"
    let cut = try await cutText(prompt)
    var contents: [String] = []
    for try await snapshot in session.streamResponse(
      to: prompt, options: HybridGenerationOptions(foundationModels: GenerationOptions(maximumResponseTokens: 8)))
    {
      contents.append(snapshot.content)
    }
    let final = try XCTUnwrap(contents.last)
    XCTAssertTrue(final.hasPrefix(cut), "\(final) must go on from \(cut)")
    XCTAssertTrue(contents.contains(cut) || contents.contains { cut.hasPrefix($0) }, "the cloud's text was shown")
    let entries = session.transcript.entries
    XCTAssertEqual(entries.count, 2, "one answer")
    XCTAssertEqual(entries.last?.text, final)
    XCTAssertEqual(entries.last?.modelVersion, LocalSystemModel.modelVersion)
    guard case .interrupted(let error)? = logs.fallbacks.first?.reason,
      case .connectionLost? = error as? HybridInferenceError
    else { return XCTFail("expected an interruption by a cut stream, got \(logs.fallbacks)") }
  }

  func testCutStream_respond_namesTheModelThatBeganIt() async throws {
    let cloud = server.model("fault-unfinished~body-chunked-cut~\(uniqueID())")
    let local = try LocalTestModels.tiny()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, continuesInterruptedAnswers: true), logHandler: .silent)
    let response = try await session.respond(
      to: "hello", options: HybridGenerationOptions(foundationModels: GenerationOptions(maximumResponseTokens: 4)))
    XCTAssertEqual(response.rawResponse.modelVersion, LocalSystemModel.modelVersion)
    XCTAssertEqual(response.rawResponse.continuedFrom, "echo-model")
    XCTAssertEqual(response.rawResponse.fallbackReason, .connectionLost)
  }

  func testResetStream_anotherCloudModelContinues_fromAModelTurnAndAUserTurn() async throws {
    let backupName = "echo~\(uniqueID())"
    let cloud = server.model("fault-reset-mid~\(uniqueID())")
    let backup = server.model(backupName)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: backup, continuesInterruptedAnswers: true),
      logHandler: .silent)
    let response = try await session.streamResponse(to: "hello there friend").collect()
    let first = "echo: hello there friend".prefix("echo: hello there friend".count / 3)
    XCTAssertTrue(response.content.hasPrefix(first), response.content)
    XCTAssertTrue(response.content.contains("Continue it exactly"), "the backup echoes the user turn it got")
    let request = try await server.lastRequest(backupName)
    let body = try XCTUnwrap(request["body"] as? [String: Any])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    XCTAssertEqual(contents.compactMap { $0["role"] as? String }, ["user", "model", "user"])
    let partial = (contents[1]["parts"] as? [[String: Any]])?.first?["text"] as? String
    XCTAssertEqual(partial, String(first))
    XCTAssertEqual(session.transcript.entries.count, 2)
  }

  func testRateLimitWithRetryInfo_isRemembered_forHybridsWithThePolicy_untilCleared() async throws {
    let name = "fault-429~times-1000~retry-60s~\(uniqueID())"
    let cloud = server.model(name, requestOptions: once)
    let local = ScriptedModel("local", placement: .onDevice)
    let tolerant = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, fallback: .default.adding(.rateLimited)),
      logHandler: logs.handler)
    let first = try await tolerant.respond(to: "one")
    XCTAssertEqual(first.rawResponse.modelVersion, "local")
    XCTAssertEqual(first.rawResponse.fallbackReason, .rateLimited)
    let countAfterFirst = try await server.requestCount(name)
    XCTAssertEqual(countAfterFirst, 1)
    XCTAssertEqual(cloudAPIError(cloud.rememberedFailure)?.retryDelay, .seconds(60))

    _ = try await tolerant.respond(to: "two")
    let countAfterSecond = try await server.requestCount(name)
    XCTAssertEqual(countAfterSecond, 1, "the remembered limit goes straight to the secondary")
    guard case .remembered? = logs.fallbacks.last?.reason else {
      return XCTFail("expected a remembered fallback, got \(String(describing: logs.fallbacks.last))")
    }

    // Alone, or in a hybrid that does not fall back on rate limits, the server is asked.
    _ = await captureError { try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "x") }
    let strict = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    _ = await captureError { try await strict.respond(to: "y") }
    let countAfterDirect = try await server.requestCount(name)
    XCTAssertEqual(countAfterDirect, 3)

    // Another key on the same server and model is not limited by this one's 429.
    let otherKey = server.model(name, apiKey: "another-key-0123", requestOptions: once)
    XCTAssertNil(otherKey.rememberedFailure)

    cloud.clearRememberedRateLimit()
    XCTAssertNil(cloud.rememberedFailure)
    _ = try await tolerant.respond(to: "three")
    let countAfterClear = try await server.requestCount(name)
    XCTAssertEqual(countAfterClear, 4, "cleared: the server is asked again")
  }

  func testRateLimitWithoutRetryInfo_isNotRemembered() async throws {
    let name = "fault-429~times-1000~retry-none~\(uniqueID())"
    let cloud = server.model(name, requestOptions: once)
    let local = ScriptedModel("local", placement: .onDevice)
    let tolerant = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, fallback: .default.adding(.rateLimited)),
      logHandler: .silent)
    for prompt in ["one", "two"] {
      let response = try await tolerant.respond(to: prompt)
      XCTAssertEqual(response.rawResponse.modelVersion, "local")
    }
    XCTAssertNil(cloud.rememberedFailure)
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 2, "each request asked the server")
  }

  func testRateLimitThatClears_isForgottenOnTheNextSuccess() async throws {
    let name = "fault-429~times-1~retry-60s~\(uniqueID())"
    let cloud = server.model(name, requestOptions: once)
    _ = await captureError { try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "x") }
    XCTAssertNotNil(cloud.rememberedFailure)
    _ = try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "y")
    XCTAssertNil(cloud.rememberedFailure, "a 2xx clears the limit")
  }

  func testHedge_theSlowServersStreamIsCancelled_notAwaited() async throws {
    // The primary's server says nothing for 30 s; the hedge answers at once.
    // The answer returns only once the loser has stopped, so its returning
    // long before 30 s shows the slow request was cancelled, not waited for.
    let slow = server.model("fault-slow-head~delay-30000~\(uniqueID())")
    let fast = server.model("echo~\(uniqueID())")
    let session = GenerativeModelSession(
      model: .hybridModel(primary: slow, secondary: fast, hedgeAfter: .milliseconds(100)), logHandler: logs.handler)
    let start = ContinuousClock.now
    let response = try await session.streamResponse(to: "quick").collect()
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(15), "hang guard: the loser must be cancelled")
    XCTAssertEqual(response.content, "echo: quick")
    XCTAssertEqual(response.rawResponse.fallbackReason, .hedged)
    XCTAssertTrue(logs.records.contains { $0.message.hasPrefix("hedging: ") })
  }

  /// The text `fault-unfinished~body-chunked-cut` sends before it cuts: its first two echo events.
  private func cutText(_ prompt: String) async throws -> String {
    let text = "echo: " + prompt
    let third = max(1, text.count / 3)
    return String(text.prefix(2 * third))
  }
}
