import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Wire types, error bodies and retry arithmetic, without a server.
final class CloudWireTests: XCTestCase {
  func testErrorEnvelope_readsRetryInfoErrorInfoAndQuotaFailure() throws {
    let body = Data(
      #"""
      {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
          {"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"},
          {"quotaId": "GenerateContentInputTokensPerModelPerMinute-FreeTier"}]},
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED"},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "47s"}]}}
      """#.utf8)
    guard
      case .cloudAPI(let error) = RemoteErrorMapping.apiError(
        status: 429, contentType: "application/json", body: body, secrets: nil)
    else { return XCTFail("not a cloudAPI error") }
    XCTAssertEqual(error.httpStatus, 429)
    XCTAssertEqual(error.status, "RESOURCE_EXHAUSTED")
    XCTAssertEqual(error.message, "quota")
    XCTAssertEqual(error.retryDelay, .seconds(47))
    XCTAssertEqual(error.reason, "RATE_LIMIT_EXCEEDED")
    XCTAssertEqual(error.quotaIds.count, 2)
  }

  func testErrorBodies_inArrayOrSSEFraming_andHTML() {
    let object = #"{"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}"#
    for body in [object, "[\(object)]", "data: \(object)\r\n\r\n"] {
      guard
        case .cloudAPI(let error) = RemoteErrorMapping.apiError(
          status: 503, contentType: nil, body: Data(body.utf8), secrets: nil)
      else { return XCTFail(body) }
      XCTAssertEqual(error.status, "UNAVAILABLE", body)
      XCTAssertEqual(error.message, "busy", body)
    }
    guard
      case .cloudAPI(let html) = RemoteErrorMapping.apiError(
        status: 502, contentType: "text/html; charset=UTF-8", body: Data("<html>bad</html>".utf8), secrets: nil)
    else { return XCTFail("html") }
    XCTAssertNil(html.status)
    XCTAssertEqual(html.httpStatus, 502)
    XCTAssertTrue(html.message.contains("text/html"), html.message)
  }

  func testUnknownEnumValuesAndFields_decodeAndKeepTheRawString() throws {
    let json = #"""
      {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi", "futurePart": 1}]},
        "finishReason": "SOMETHING_NEW", "novel": {"x": 1}}],
       "promptFeedback": {"blockReason": "NEW_BLOCK"}, "brandNewField": true, "modelVersion": "m"}
      """#
    let response = try JSONDecoder().decode(GenerateContentResponse.self, from: Data(json.utf8))
    XCTAssertEqual(response.finishReason?.rawValue, "SOMETHING_NEW")
    // A reason this library does not know ends the answer as stopped.
    XCTAssertEqual(response.finishReason?.isStoppedByPolicy, true)
    XCTAssertEqual(response.promptFeedback?.blockReason?.rawValue, "NEW_BLOCK")
    XCTAssertEqual(response.text, "hi")
  }

  func testDurations() {
    XCTAssertEqual(ErrorEnvelope.parseDuration("47s"), .seconds(47))
    XCTAssertEqual(ErrorEnvelope.parseDuration("0.5s"), .milliseconds(500))
    XCTAssertEqual(ErrorEnvelope.parseDuration("1.000340012s"), .milliseconds(1001))
    XCTAssertNil(ErrorEnvelope.parseDuration("soon"))
    XCTAssertNil(ErrorEnvelope.parseDuration("-1s"))
  }

  func testRetryDecisions() {
    func api(_ status: Int, quota: [String] = []) -> HybridInferenceError {
      .cloudAPI(CloudAPIError(httpStatus: status, message: "", quotaIds: quota))
    }
    func decision(_ error: any Error, idempotent: Bool = false) -> RetryLoop.Decision {
      RetryLoop.decision(for: error, isIdempotent: idempotent)
    }
    for status in [408, 429, 500, 502, 503, 504] {
      XCTAssertNotEqual(decision(api(status)), .never, "\(status)")
    }
    for status in [400, 401, 403, 404, 409, 501] {
      XCTAssertEqual(decision(api(status)), .never, "\(status)")
    }
    XCTAssertEqual(decision(api(429, quota: ["GenerateRequestsPerDayPerProjectPerModel"])), .never)
    // Before the body went out: nothing reached the server, any call goes again.
    XCTAssertNotEqual(decision(HybridInferenceError.offline(URLError(.networkConnectionLost))), .never)
    XCTAssertEqual(decision(HybridInferenceError.offline(URLError(.cannotConnectToHost))), .never)
    // After: a generation may have run (and been billed); only counting goes again.
    let lost = HybridInferenceError.connectionLost(URLError(.networkConnectionLost))
    XCTAssertEqual(decision(lost), .never)
    XCTAssertNotEqual(decision(lost, idempotent: true), .never)
    let truncated = HybridInferenceError.responseTruncated(response: GenerateContentResponse(modelVersion: "m"))
    XCTAssertEqual(decision(truncated, idempotent: true), .never)
    XCTAssertEqual(decision(HybridInferenceError.timedOut(.seconds(1))), .never)
    XCTAssertEqual(decision(CancellationError()), .never)
  }

  func testBackoff_isFullJitterUnderAGrowingCap_andNeverBelowTheServersDelay() {
    let policy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(30))
    XCTAssertEqual(policy.delay(beforeRetry: 1, fraction: 1, serverMinimum: nil), .seconds(1))
    XCTAssertEqual(policy.delay(beforeRetry: 3, fraction: 1, serverMinimum: nil), .seconds(4))
    XCTAssertEqual(policy.delay(beforeRetry: 9, fraction: 1, serverMinimum: nil), .seconds(30))
    XCTAssertEqual(policy.delay(beforeRetry: 3, fraction: 0.5, serverMinimum: nil), .seconds(2))
    XCTAssertEqual(policy.delay(beforeRetry: 2, fraction: 0, serverMinimum: nil), .zero)
    XCTAssertEqual(policy.delay(beforeRetry: 1, fraction: 0.2, serverMinimum: .seconds(47)), .seconds(47))
    XCTAssertEqual(policy.delay(beforeRetry: 64, fraction: 1, serverMinimum: nil), .seconds(30))
    XCTAssertEqual(RetryPolicy.none.maxAttempts, 1)
    XCTAssertEqual(RetryPolicy.default, RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(30)))
  }

  func testGenerateContentRequest_encoding() throws {
    let transcript = Transcript(
      instructions: "sys",
      entries: [
        .prompt("hi"),
        .response(
          Content(role: "model", parts: [Part(text: "t", thought: true, thoughtSignature: "c2ln")]),
          modelVersion: "m"),
        .prompt("again"),
      ])
    let request = GenerateContentRequest(
      transcript: transcript,
      generationConfig: GenerationConfig(thinkingConfig: ThinkingConfig(thinkingLevel: .high, thinkingBudget: 0)),
      safetySettings: [])
    let json = try XCTUnwrap(
      try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any])
    XCTAssertEqual(Set(json.keys), ["contents", "systemInstruction", "generationConfig"])
    let config = try XCTUnwrap(json["generationConfig"] as? [String: Any])
    let thinking = try XCTUnwrap(config["thinkingConfig"] as? [String: Any])
    XCTAssertEqual(Set(thinking.keys), ["thinkingLevel", "thinkingBudget"])
    XCTAssertEqual(thinking["thinkingLevel"] as? String, "HIGH")
    XCTAssertEqual(thinking["thinkingBudget"] as? Int, 0)
    let contents = try XCTUnwrap(json["contents"] as? [[String: Any]])
    let modelPart = try XCTUnwrap((contents[1]["parts"] as? [[String: Any]])?.first)
    XCTAssertEqual(modelPart["thoughtSignature"] as? String, "c2ln")
    XCTAssertEqual(modelPart["thought"] as? Bool, true)
    XCTAssertEqual(Set(modelPart.keys), ["text", "thought", "thoughtSignature"])
  }

  func testEndpointURLs_neverCarryTheKey() async throws {
    let base = try XCTUnwrap(URL(string: "https://proxy.example/gemini/"))
    let endpoint = GeminiEndpoint(baseURL: base, apiVersion: "v1beta", modelName: "gemini-3.1-flash-lite")
    XCTAssertEqual(
      try endpoint.url(for: .streamGenerateContent).absoluteString,
      "https://proxy.example/gemini/v1beta/models/gemini-3.1-flash-lite:streamGenerateContent?alt=sse")
    XCTAssertEqual(
      try endpoint.url(for: .countTokens).absoluteString,
      "https://proxy.example/gemini/v1beta/models/gemini-3.1-flash-lite:countTokens")
    let key = try XCTUnwrap(APIKey("secret-key"))
    var request = try endpoint.request(.generateContent, body: ["a": 1], tokens: false, timeout: .seconds(5))
    let authorizer = try XCTUnwrap(
      RemoteAuthorizer(
        .apiKey(key.value), keyPlacement: .header("x-goog-api-key"), metadataHost: nil, options: RequestOptions(),
        log: .silent))
    _ = try await authorizer.sign(&request, deadline: .now + .seconds(5), timedOut: .timedOut(.seconds(5)))
    XCTAssertFalse(request.url?.absoluteString.contains("secret") ?? true)
    XCTAssertEqual(request.value(forHTTPHeaderField: "x-goog-api-key"), "secret-key")
    XCTAssertNil(request.value(forHTTPHeaderField: "Authorization"))
    XCTAssertEqual("\(key)", "<redacted>")
  }
}
