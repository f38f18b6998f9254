import XCTest

@testable import HybridInference

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

  private func delta(_ parts: [Part], finish: FinishReason? = nil, tokens: Int? = nil)
    -> GenerateContentResponse
  {
    GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", parts: parts), finishReason: finish)],
      usageMetadata: tokens.map { UsageMetadata(totalTokenCount: $0) }, modelVersion: "m")
  }
}
