import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The OpenAI-compatible wire format without a server: request encoding,
/// chunk mapping, error envelopes, `Retry-After`, availability.
final class OpenAIWireTests: XCTestCase {
  func testTranscriptFromAnyModel_mapsToSystemUserAssistantMessages() throws {
    var answer = Content(role: "model", parts: [Part(text: "thinking", thought: true), Part(text: "Paris.")])
    answer.parts.append(Part(text: "", thoughtSignature: "sig"))
    let transcript = Transcript(
      instructions: "Be brief.",
      entries: [
        .prompt("Capital of France?"), .response(answer, modelVersion: "gemini-x"),
        .response(Content(text: ""), modelVersion: LocalSystemModel.modelVersion), .prompt("And Spain?"),
      ])
    let options = HybridGenerationOptions.gemini(
      GenerationConfig(
        temperature: 0.5, topP: 0.9, topK: 40, maxOutputTokens: 64, stopSequences: ["\n\n"], seed: 7,
        thinkingConfig: ThinkingConfig(thinkingLevel: .high)))
    let body = try ChatCompletionRequest(
      ModelRequest(transcript: transcript, options: options), model: "m", stream: true)
    let json = try XCTUnwrap(
      JSONSerialization.jsonObject(with: JSONEncoder().encode(body)) as? [String: Any])
    let messages = try XCTUnwrap(json["messages"] as? [[String: String]])
    XCTAssertEqual(
      messages,
      [
        ["role": "system", "content": "Be brief."], ["role": "user", "content": "Capital of France?"],
        ["role": "assistant", "content": "Paris."], ["role": "user", "content": "And Spain?"],
      ], "thoughts and the empty turn stay out")
    XCTAssertEqual(json["temperature"] as? Double, 0.5)
    XCTAssertEqual(json["top_p"] as? Double, 0.9)
    XCTAssertEqual(json["top_k"] as? Int, 40)
    XCTAssertEqual(json["max_tokens"] as? Int, 64)
    XCTAssertEqual(json["stop"] as? [String], ["\n\n"])
    XCTAssertEqual(json["seed"] as? Int, 7)
    XCTAssertEqual(json["stream"] as? Bool, true)
    XCTAssertEqual((json["stream_options"] as? [String: Bool])?["include_usage"], true)
    XCTAssertEqual(
      Set(json.keys),
      ["model", "messages", "stream", "stream_options", "temperature", "top_p", "top_k", "max_tokens", "stop", "seed"])
  }

  func testResponseSchema_isAStrictJSONSchemaFormat_inPropertyOrder() throws {
    let schema = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b","a"]}"#
    )
    let request = ModelRequest(transcript: Transcript(entries: [.prompt("Pick")]), responseSchema: schema)
    let text = try XCTUnwrap(
      String(
        data: RequestBodyEncoder.encode(ChatCompletionRequest(request, model: "m", stream: false)), encoding: .utf8))
    for expected in [
      #""schema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b","a"]}"#,
      #""type":"json_schema""#, #""strict":true"#, #""name":"response""#,
    ] {
      XCTAssertTrue(text.contains(expected), "\(expected) in \(text)")
    }

    struct Unsupported: Generable { var scores: [String: Int] }
    let failed = ModelRequest(
      transcript: Transcript(entries: [.prompt("Pick")]), responseSchema: Unsupported.generationSchema)
    XCTAssertThrowsError(try ChatCompletionRequest(failed, model: "m", stream: false)) { error in
      guard case .unsupportedSchema? = error as? HybridInferenceError else { return XCTFail("\(error)") }
    }
  }

  func testInlineDataOtherThanImagesAndAudio_isUnsupported() {
    let pdf = Part(inlineData: Part.Blob(mimeType: "application/pdf", data: Data([1])))
    let content = Content(role: "user", parts: [pdf])
    let request = ModelRequest(transcript: Transcript(entries: [Transcript.Entry(role: .user, content: content)]))
    XCTAssertThrowsError(try ChatCompletionRequest(request, model: "m", stream: false)) { error in
      guard case .unsupportedRequest? = error as? HybridInferenceError else { return XCTFail("\(error)") }
    }
  }

  func testChunksAndFinishReasons_mapToGeminiShapedDeltas() throws {
    let json =
      #"{"id":"c1","model":"srv","choices":[{"index":0,"delta":{"content":"Hi","reasoning_content":"hmm"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#
    let chunk = try JSONDecoder().decode(ChatCompletionResponse.self, from: Data(json.utf8))
    let delta = chunk.response(fallbackModel: "mine")
    XCTAssertEqual(delta.modelVersion, "srv")
    XCTAssertEqual(delta.text, "Hi")
    XCTAssertEqual(delta.thoughtText, "hmm")
    XCTAssertEqual(delta.finishReason, .maxTokens)
    XCTAssertEqual(delta.usageMetadata, UsageMetadata(promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4))
    XCTAssertEqual(delta.responseId, "c1")
    XCTAssertEqual(ChatCompletionResponse.finishReason("stop"), .stop)
    XCTAssertEqual(ChatCompletionResponse.finishReason("content_filter"), .safety)
    let bare = try JSONDecoder().decode(ChatCompletionResponse.self, from: Data(#"{"choices":[]}"#.utf8))
    XCTAssertEqual(bare.response(fallbackModel: "mine").modelVersion, "mine", "no model field: the name")
  }

  func testErrorEnvelopes_ofEachServerKind() throws {
    let head = ResponseHead(statusCode: 429, contentType: "application/json", retryAfter: "2")
    let openAI = #"{"error":{"message":"slow down","type":"rate_limit_exceeded","code":"rate_limit_exceeded"}}"#
    guard case .cloudAPI(let error) = OpenAIErrorMapping.apiError(head: head, body: Data(openAI.utf8), secrets: nil)
    else { return XCTFail() }
    XCTAssertEqual(
      error,
      CloudAPIError(
        httpStatus: 429, status: "rate_limit_exceeded", message: "slow down", retryDelay: .seconds(2),
        reason: "rate_limit_exceeded"))
    let vllm = #"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#
    XCTAssertEqual(OpenAIErrorMapping.envelope(in: Data(vllm.utf8), httpStatus: nil)?.httpStatus, 400)
    let ollama = #"{"error":"model not found"}"#
    XCTAssertEqual(OpenAIErrorMapping.envelope(in: Data(ollama.utf8), httpStatus: 404)?.message, "model not found")
    XCTAssertNil(OpenAIErrorMapping.envelope(in: Data(#"{"id":"x","choices":[]}"#.utf8), httpStatus: nil))
  }

  func testRetryAfter_secondsAndHTTPDate() {
    XCTAssertEqual(OpenAIErrorMapping.retryAfter("3"), .seconds(3))
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let later = "Tue, 14 Nov 2023 22:13:30 GMT"  // 10 s after `now`
    XCTAssertEqual(OpenAIErrorMapping.retryAfter(later, now: now), .seconds(10))
    XCTAssertNil(OpenAIErrorMapping.retryAfter("soon"))
    XCTAssertNil(OpenAIErrorMapping.retryAfter("-1"))
  }

  func testAvailabilityAndKey() throws {
    let url = try XCTUnwrap(URL(string: "http://127.0.0.1:1/v1"))
    let keyless = OpenAICompatibleModel(
      name: "m", baseURL: url, apiKey: nil, requestOptions: RequestOptions(), requiresAPIKey: false,
      logHandler: .silent, environment: [:])
    XCTAssertEqual(keyless.availability, .available)
    XCTAssertNil(keyless.apiKey)
    let required = OpenAICompatibleModel(
      name: "m", baseURL: url, apiKey: nil, requestOptions: RequestOptions(), requiresAPIKey: true,
      logHandler: .silent, environment: [:])
    XCTAssertEqual(required.availability, .unavailable(.missingAPIKey))
    let fromEnvironment = OpenAICompatibleModel(
      name: "m", baseURL: url, apiKey: nil, requestOptions: RequestOptions(), requiresAPIKey: true,
      logHandler: .silent, environment: ["OPENAI_API_KEY": "sk-env"])
    XCTAssertEqual(fromEnvironment.apiKey?.value, "sk-env")
    XCTAssertEqual(fromEnvironment.placement, .cloud)
    let bad = OpenAICompatibleModel(name: "m", baseURL: try XCTUnwrap(URL(string: "ftp://x/v1")), apiKey: nil)
    XCTAssertEqual(bad.availability, .unavailable(.invalidBaseURL))
  }

  func testAKeyIsNeverSentInTheClearOffThisMachine() async throws {
    let remote = OpenAICompatibleModel(
      name: "m", baseURL: try XCTUnwrap(URL(string: "http://10.1.2.3:8080/v1")), apiKey: "sk-x",
      logHandler: .silent)
    let error = await captureError {
      try await remote.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("x")])))
    }
    guard case .insecureBaseURL? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let endpoint = OpenAIEndpoint(baseURL: remote.baseURL)
    let request = try endpoint.request(
      "chat/completions", body: ["a": 1], credentialed: false, streaming: false, timeout: .seconds(1))
    XCTAssertNil(request.value(forHTTPHeaderField: "Authorization"), "no key, no header; plain HTTP allowed")
  }
}
