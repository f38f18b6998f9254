import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Construction: the key and base URL fallbacks, availability, names.
final class CloudModelTests: XCTestCase {
  private func make(
    apiKey: String? = nil, baseURL: URL? = nil, environment: [String: String]
  ) -> CloudGeminiModel {
    CloudGeminiModel(
      name: "gemini-3.1-flash-lite", apiKey: apiKey, baseURL: baseURL, apiVersion: "v1beta",
      requestOptions: RequestOptions(), safetySettings: nil, logHandler: .silent,
      environment: environment)
  }

  func testThePublicSpellingCompiles() {
    let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite")
    XCTAssertEqual(cloud.modelVersion, "gemini-3.1-flash-lite")
    XCTAssertEqual(cloud.placement, .cloud)
    XCTAssertEqual(cloud.apiVersion, "v1beta")
  }

  func testKeyResolution() {
    XCTAssertEqual(make(environment: [:]).availability, .unavailable(.missingAPIKey))
    XCTAssertEqual(make(environment: ["GEMINI_API_KEY": ""]).availability, .unavailable(.missingAPIKey))
    XCTAssertEqual(make(environment: ["GOOGLE_API_KEY": "g"]).apiKey?.value, "g")
    XCTAssertEqual(make(environment: ["GEMINI_API_KEY": "a", "GOOGLE_API_KEY": "g"]).apiKey?.value, "a")
    XCTAssertEqual(make(apiKey: "p", environment: ["GEMINI_API_KEY": "a"]).apiKey?.value, "p")
    XCTAssertEqual(make(environment: ["GEMINI_API_KEY": "a"]).availability, .available)
  }

  func testBaseURLResolution() throws {
    XCTAssertEqual(make(environment: [:]).baseURL.absoluteString, "https://generativelanguage.googleapis.com")
    let proxy = "http://127.0.0.1:9999/proxy"
    XCTAssertEqual(make(environment: ["GOOGLE_GEMINI_BASE_URL": proxy]).baseURL.absoluteString, proxy)
    let explicit = try XCTUnwrap(URL(string: "http://localhost:1"))
    XCTAssertEqual(
      make(baseURL: explicit, environment: ["GOOGLE_GEMINI_BASE_URL": proxy]).baseURL, explicit)
  }

  func testSessionRefusesAModelWithoutAKey() async {
    let session = GenerativeModelSession(model: make(environment: [:]), logHandler: .silent)
    do {
      _ = try await session.respond(to: "hi")
      XCTFail("expected unavailable")
    } catch HybridInferenceError.unavailable(let model, .missingAPIKey) {
      XCTAssertEqual(model, "gemini-3.1-flash-lite")
    } catch {
      XCTFail("\(error)")
    }
  }
}
