import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 20, point 5: what an intermediate round's text is. A text answer
/// keeps it: the stream, `respond` and the transcript show every round's
/// text, joined by a blank line, and no snapshot ever shrinks. A structured
/// answer is the final round's JSON only.
final class ToolRoundTextTests: XCTestCase {
  private func model() -> ScriptedModel {
    ScriptedModel(
      "cloud", placement: .cloud,
      script: [.textThenCalls(["Let me ", "check."], [weatherCall("Paris")]), .answer(["Sun", "ny."])])
  }

  private let expected = "Let me check.\n\nSunny."

  func testStreamedSnapshotsNeverShrink_acrossToolRounds() async throws {
    let session = GenerativeModelSession(model: model(), tools: [WeatherTool()], logHandler: .silent)
    var contents: [String] = []
    for try await snapshot in session.streamResponse(to: "Weather?") { contents.append(snapshot.content) }
    for (earlier, later) in zip(contents, contents.dropFirst()) {
      XCTAssertTrue(
        later.hasPrefix(earlier), "a snapshot shrank: \(earlier.debugDescription) -> \(later.debugDescription)")
    }
    XCTAssertEqual(contents.first, "Let me ", "the first round's text is streamed as it comes")
    XCTAssertEqual(contents.last, expected)
  }

  func testRespondStreamAndTranscriptAgree() async throws {
    let streamed = GenerativeModelSession(model: model(), tools: [WeatherTool()], logHandler: .silent)
    let collected = try await streamed.streamResponse(to: "Weather?").collect()
    let answered = GenerativeModelSession(model: model(), tools: [WeatherTool()], logHandler: .silent)
    let response = try await answered.respond(to: "Weather?")
    XCTAssertEqual(collected.content, expected)
    XCTAssertEqual(response.content, expected)
    XCTAssertEqual(response.rawResponse.text, "Sunny.", "rawResponse is the final round's response")
    XCTAssertEqual(streamed.transcript, answered.transcript)
    let entries = answered.transcript.entries
    XCTAssertEqual(entries.count, 4)
    XCTAssertEqual(entries[1].text, "Let me check.")
    XCTAssertEqual(entries[1].toolCalls.map(\.name), ["get_weather"])
    XCTAssertEqual(entries[3].text, "Sunny.")
    // The turn's text is its answers' text, joined as the stream joined it.
    let answers = entries.dropFirst().filter { $0.role == .model }.map(\.text).filter { !$0.isEmpty }
    XCTAssertEqual(answers.joined(separator: "\n\n"), response.content)
  }

  func testARoundWithoutText_addsNoSeparator() async throws {
    let quiet = ScriptedModel(
      "cloud", placement: .cloud, script: [.calls([weatherCall("Paris")]), .answer(["Sunny."])])
    let session = GenerativeModelSession(model: quiet, tools: [WeatherTool()], logHandler: .silent)
    let response = try await session.streamResponse(to: "Weather?").collect()
    XCTAssertEqual(response.content, "Sunny.")
  }

  func testStructuredAnswer_isTheFinalRoundsJSONOnly() async throws {
    func structuredModel() -> ScriptedModel {
      ScriptedModel(
        "cloud", placement: .cloud,
        script: [
          .textThenCalls(["Checking."], [weatherCall("Paris")]), .answer([#"{"ci"#, #"ty":"Pa"#, #"ris"}"#]),
        ])
    }
    let streamed = GenerativeModelSession(model: structuredModel(), tools: [WeatherTool()], logHandler: .silent)
    var texts: [String] = []
    for try await snapshot in streamed.streamResponse(to: "City?", generating: CityArguments.self) {
      texts.append(snapshot.jsonText)
    }
    XCTAssertEqual(texts.last, #"{"city":"Paris"}"#)
    XCTAssertFalse(texts.contains { $0.contains("Checking") }, "\(texts)")
    let answered = GenerativeModelSession(model: structuredModel(), tools: [WeatherTool()], logHandler: .silent)
    let response = try await answered.respond(to: "City?", generating: CityArguments.self)
    XCTAssertEqual(response.content.city, "Paris")
    XCTAssertEqual(answered.transcript.entries[1].text, "Checking.", "the transcript keeps the round's text")
    XCTAssertEqual(streamed.transcript, answered.transcript)
  }
}
