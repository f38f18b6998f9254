import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceLlama
import XCTest

/// What the report of an answer says about the model's thoughts: the
/// `You used:` line's thought tokens and the JSON object's `thoughts`.
final class CLIThoughtSummaryTests: XCTestCase {
  private let thinking = GenerateContentResponse(
    candidates: [
      Candidate(
        content: Content(
          role: "model", parts: [Part(text: "Blue light scatters.", thought: true), Part(text: "Rayleigh.")]),
        finishReason: .stop)
    ],
    usageMetadata: UsageMetadata(
      promptTokenCount: 12, candidatesTokenCount: 9, thoughtsTokenCount: 30, totalTokenCount: 51),
    modelVersion: LocalSystemModel.modelVersion, localModelName: "Qwen3 0.6B")

  private func summary(thoughts: String?) -> ResponseSummary {
    ResponseSummary(
      content: thinking.text, response: thinking, mode: .onlyOnDevice, fallback: nil,
      timing: ResponseTiming(total: .milliseconds(1100), timeToFirstToken: .milliseconds(100)),
      thoughts: thoughts)
  }

  private func json(_ summary: ResponseSummary) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(try summary.jsonLine().utf8))
    return try XCTUnwrap(object as? [String: Any])
  }

  func testUsageLineCountsThoughtTokens() {
    // 39 generated tokens, 38 after the first, in the second after it.
    XCTAssertEqual(
      summary(thoughts: "Blue light scatters.").usageLine,
      "You used: llama-cpp-system-language-model (Qwen3 0.6B) · 12 prompt + 30 thought + 9 answer tokens"
        + " · first token 100 ms · 38.0 tokens/s")
  }

  func testUsageLineWithoutThoughts() {
    var response = thinking
    response.usageMetadata?.thoughtsTokenCount = 0
    let line = ResponseSummary(
      content: "Rayleigh.", response: response, mode: .onlyOnDevice, fallback: nil,
      timing: ResponseTiming(total: .seconds(2))
    ).usageLine
    XCTAssertTrue(line.contains(" · 12 prompt + 9 answer tokens · "), line)
  }

  func testJSONCarriesTheThoughts() throws {
    let object = try json(summary(thoughts: "Blue light scatters.\u{1B}[2J"))
    XCTAssertEqual(object["thoughts"] as? String, "Blue light scatters.\u{1B}[2J")
    XCTAssertEqual(object["content"] as? String, "Rayleigh.")
    let timing = try XCTUnwrap(object["timing"] as? [String: Any])
    XCTAssertEqual(timing["tokensPerSecond"] as? Double, 38)
  }

  func testJSONLeavesOutThoughtsWhenThereAreNone() throws {
    XCTAssertNil(try json(summary(thoughts: nil))["thoughts"])
    XCTAssertNil(try json(summary(thoughts: ""))["thoughts"])
  }
}
