import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

final class ResponseAccumulatorTests: XCTestCase {
  func testJoinsTextKeepsThoughtsApartAndTakesLatestMetadata() {
    var accumulator = ResponseAccumulator()
    accumulator.add(delta([Part(text: "Let me think", thought: true)]))
    accumulator.add(delta([Part(text: " more", thought: true)]))
    accumulator.add(delta([Part(text: "Answer")]))
    accumulator.add(delta([Part(text: " done", thoughtSignature: "sig")], finish: .stop, tokens: 9))
    let response = accumulator.response
    XCTAssertEqual(response?.text, "Answer done")
    XCTAssertEqual(response?.thoughtText, "Let me think more")
    XCTAssertEqual(response?.candidates.first?.content?.parts.count, 2)
    XCTAssertEqual(response?.candidates.first?.content?.parts.last?.thoughtSignature, "sig")
    XCTAssertEqual(response?.finishReason, .stop)
    XCTAssertEqual(response?.usageMetadata?.totalTokenCount, 9)
  }

  func testFunctionCallPartsAreKeptWhole() {
    var accumulator = ResponseAccumulator()
    accumulator.add(delta([Part(text: "calling")]))
    accumulator.add(delta([Part(functionCall: .init(name: "now", args: .object([:])), thoughtSignature: "s")]))
    XCTAssertEqual(accumulator.response?.candidates.first?.content?.parts.count, 2)
    XCTAssertEqual(accumulator.response?.candidates.first?.content?.parts.last?.functionCall?.name, "now")
  }

  // Issue 20, point 3: the running text is what the session shows and appends to.

  /// The accumulator's running answer text is the text of the response it
  /// accumulates, however the deltas split it (thoughts, calls, candidates).
  func testAddedTextAddsUpToTheResponsesText() {
    var generator = SplitMix(seed: 20)
    for _ in 0..<200 {
      var accumulator = ResponseAccumulator()
      var text = ""
      for _ in 0..<Int.random(in: 1...12, using: &generator) {
        text += accumulator.add(randomDelta(&generator))
        XCTAssertEqual(text, accumulator.response?.text ?? "")
        XCTAssertEqual(accumulator.hasFunctionCalls, !(accumulator.response?.functionCalls.isEmpty ?? true))
      }
    }
  }

  private func randomDelta(_ generator: inout SplitMix) -> GenerateContentResponse {
    let choices = ["a", "bc", "", "é", "🙂"]
    func part() -> Part {
      switch Int.random(in: 0..<6, using: &generator) {
      case 0: Part(text: choices.randomElement(using: &generator), thought: true)
      case 1: Part(functionCall: .init(name: "f", args: .object([:])))
      case 2: Part(text: "s", thoughtSignature: "sig")
      default: Part(text: choices.randomElement(using: &generator))
      }
    }
    let candidates = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
      Candidate(
        content: Content(role: "model", parts: (0..<Int.random(in: 0...3, using: &generator)).map { _ in part() }),
        index: Bool.random(using: &generator) ? nil : Int.random(in: 0...1, using: &generator))
    }
    return GenerateContentResponse(candidates: candidates, modelVersion: "m")
  }

  private func delta(_ parts: [Part], finish: FinishReason? = nil, tokens: Int? = nil)
    -> GenerateContentResponse
  {
    GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", parts: parts), finishReason: finish)],
      usageMetadata: tokens.map { UsageMetadata(totalTokenCount: $0) }, modelVersion: "m")
  }
}

/// A small seeded generator, so a failure repeats.
private struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
