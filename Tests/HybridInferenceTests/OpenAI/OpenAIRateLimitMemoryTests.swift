import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 25, point 2, on the OpenAI-compatible backend: a 429 with
/// `Retry-After` is remembered for that long, one without is not.
final class OpenAIRateLimitMemoryTests: OpenAIStubTestCase {
  private func tolerant(_ cloud: OpenAICompatibleModel) -> GenerativeModelSession {
    GenerativeModelSession(
      model: .hybridModel(
        primary: cloud, secondary: ScriptedModel("local", placement: .onDevice),
        fallback: .default.adding(.rateLimited)),
      logHandler: .silent)
  }

  private func model(_ name: String) -> OpenAICompatibleModel {
    OpenAICompatibleModel(
      name: name, baseURL: stub.openAIBaseURL, apiKey: Self.key,
      requestOptions: RequestOptions(timeout: .seconds(20), retryPolicy: .none), logHandler: .silent)
  }

  func testRetryAfter_isRemembered_soTheServerIsNotAskedAgain() async throws {
    let name = "fault-429~times-1000~retry-60~\(uniqueID())"
    let cloud = model(name)
    let session = tolerant(cloud)
    for prompt in ["one", "two", "three"] {
      let response = try await session.respond(to: prompt)
      XCTAssertEqual(response.rawResponse.fallbackReason, .rateLimited)
    }
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 1)
    XCTAssertEqual(cloudAPIError(cloud.rememberedFailure)?.retryDelay, .seconds(60))
    cloud.clearRememberedRateLimit()
    XCTAssertNil(cloud.rememberedFailure)
  }

  func testNoRetryAfter_isNotRemembered() async throws {
    let name = "fault-429~times-1000~retry-soon~\(uniqueID())"
    let cloud = model(name)
    let session = tolerant(cloud)
    _ = try await session.respond(to: "one")
    _ = try await session.respond(to: "two")
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 2, "an unreadable Retry-After gives no delay to remember")
  }
}
