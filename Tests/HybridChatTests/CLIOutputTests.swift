import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

/// What the command prints about an answer: the JSON object and the
/// `You used:` line, the progress bar, and the error lines.
final class CLIOutputTests: XCTestCase {
  private let localResponse = GenerateContentResponse(
    candidates: [Candidate(content: Content(role: "model", text: "Rayleigh."), finishReason: .stop)],
    usageMetadata: UsageMetadata(promptTokenCount: 12, candidatesTokenCount: 9, totalTokenCount: 21),
    modelVersion: LocalSystemModel.modelVersion, localModelName: "SmolLM2 135M Instruct")

  private func summary(
    _ response: GenerateContentResponse? = nil, fallback: FallbackEvent? = nil,
    timing: ResponseTiming = ResponseTiming(total: .milliseconds(1100), timeToFirstToken: .milliseconds(100))
  ) -> ResponseSummary {
    let response = response ?? localResponse
    return ResponseSummary(
      content: response.text, response: response, mode: .preferOnDevice, fallback: fallback,
      timing: timing)
  }

  private func json(_ summary: ResponseSummary) throws -> [String: Any] {
    let line = try summary.jsonLine()
    XCTAssertFalse(line.contains("\n"), "one object per line")
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])
    return try XCTUnwrap(object as? [String: Any])
  }

  func testJSONShape() throws {
    let object = try json(summary())
    XCTAssertEqual(
      Set(object.keys),
      ["content", "modelVersion", "localModelName", "usage", "finishReason", "fallback", "mode", "timing"])
    XCTAssertEqual(object["content"] as? String, "Rayleigh.")
    XCTAssertEqual(object["modelVersion"] as? String, "llama-cpp-system-language-model")
    XCTAssertEqual(object["localModelName"] as? String, "SmolLM2 135M Instruct")
    XCTAssertEqual(object["finishReason"] as? String, "STOP")
    XCTAssertEqual(object["mode"] as? String, "prefer-on-device")
    XCTAssertTrue(object["fallback"] is NSNull)
    let usage = try XCTUnwrap(object["usage"] as? [String: Any])
    XCTAssertEqual(usage["promptTokenCount"] as? Int, 12)
    XCTAssertEqual(usage["candidatesTokenCount"] as? Int, 9)
    XCTAssertEqual(usage["totalTokenCount"] as? Int, 21)
    let timing = try XCTUnwrap(object["timing"] as? [String: Any])
    XCTAssertEqual(timing["totalMs"] as? Double, 1100)
    XCTAssertEqual(timing["timeToFirstTokenMs"] as? Double, 100)
    XCTAssertEqual(timing["tokensPerSecond"] as? Double, 8)
  }

  func testJSONNamesTheFallback() throws {
    let event = FallbackEvent(
      from: LocalSystemModel.modelVersion, to: "gemini-3.1-flash-lite",
      reason: .unavailable(.modelNotReady))
    let cloud = GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", text: "Hi"), finishReason: .stop)],
      modelVersion: "gemini-3.1-flash-lite")
    let object = try json(summary(cloud, fallback: event))
    let fallback = try XCTUnwrap(object["fallback"] as? [String: Any])
    XCTAssertEqual(fallback["from"] as? String, "llama-cpp-system-language-model")
    XCTAssertEqual(fallback["to"] as? String, "gemini-3.1-flash-lite")
    XCTAssertEqual(
      fallback["reason"] as? String, "unavailable: the on-device model file is missing or not ready")
    XCTAssertTrue(object["usage"] is NSNull)
    XCTAssertTrue(object["localModelName"] is NSNull)
  }

  func testJSONWithoutStreamingHasNoTimeToFirstToken() throws {
    let object = try json(summary(timing: ResponseTiming(total: .seconds(2))))
    let timing = try XCTUnwrap(object["timing"] as? [String: Any])
    XCTAssertTrue(timing["timeToFirstTokenMs"] is NSNull)
    XCTAssertEqual(timing["tokensPerSecond"] as? Double, 4.5)
  }

  func testUsageLine() {
    XCTAssertEqual(
      summary().usageLine,
      "You used: llama-cpp-system-language-model (SmolLM2 135M Instruct) · 12 prompt + 9 answer tokens"
        + " · first token 100 ms · 8.0 tokens/s")
    let cloud = GenerateContentResponse(modelVersion: "gemini-3.1-flash-lite")
    XCTAssertEqual(
      summary(cloud, timing: ResponseTiming(total: .seconds(12))).usageLine,
      "You used: gemini-3.1-flash-lite · total 12.0 s")
  }

  func testTokensPerSecond() {
    let streamed = ResponseTiming(total: .seconds(3), timeToFirstToken: .seconds(1))
    XCTAssertEqual(streamed.tokensPerSecond(tokens: 11), 5)
    XCTAssertEqual(streamed.tokensPerSecond(tokens: 1) ?? 0, 1 / 3, accuracy: 1e-9)
    XCTAssertNil(streamed.tokensPerSecond(tokens: 0))
    XCTAssertEqual(ResponseTiming(total: .seconds(2)).tokensPerSecond(tokens: 10), 5)
    XCTAssertNil(ResponseTiming(total: .zero).tokensPerSecond(tokens: 10))
  }

  func testProgressBar() {
    let bar = ProgressBar(label: "Loading m.gguf", width: 10)
    XCTAssertEqual(bar.line(0), "\r\u{1B}[2KLoading m.gguf [          ]   0%")
    XCTAssertEqual(bar.line(0.45), "\r\u{1B}[2KLoading m.gguf [===>      ]  45%")
    XCTAssertEqual(bar.line(1), "\r\u{1B}[2KLoading m.gguf [==========] 100%")
    XCTAssertEqual(bar.line(7), bar.line(1))
    XCTAssertEqual(bar.line(.nan), bar.line(0))
    XCTAssertEqual(bar.erase, "\r\u{1B}[2K")
  }

  func testErrorReport() {
    XCTAssertEqual(
      ErrorReport.commandError(
        for: HybridInferenceError.unavailable(model: "gemini-x", reason: .missingAPIKey)),
      .runtime("the cloud model gemini-x needs a Gemini API key: set GEMINI_API_KEY or GOOGLE_API_KEY"))
    let offline = ErrorReport.commandError(
      for: HybridInferenceError.offline(URLError(.cannotConnectToHost)))
    XCTAssertEqual(offline.kind, .runtime)
    XCTAssertTrue(offline.message.hasPrefix("cannot reach the cloud model's server (offline: URLError"))
    XCTAssertEqual(ErrorReport.commandError(for: HybridInferenceError.emptyPrompt).kind, .usage)
    XCTAssertEqual(ErrorReport.commandError(for: CommandError.usage("x")), .usage("x"))
    XCTAssertEqual(ErrorReport.commandError(for: CancellationError()), .runtime("cancelled"))
  }
}
