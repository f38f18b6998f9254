import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

/// Model and server text cannot drive the terminal (issue 20, point 8):
/// every control character but newline and tab is printed as a visible
/// escape, in the answer, the error lines and the `You used:` line;
/// `--json` keeps the exact text as JSON escapes.
final class CLITerminalTextTests: XCTestCase {
  private typealias Chat = HybridChatProcess
  /// A colour (CSI), a hyperlink and a clipboard write (OSC), a bell, a
  /// carriage return, a backspace, DEL and an 8-bit CSI (C1).
  private static let hostile =
    "red \u{1B}[31mtext\u{1B}[0m \u{1B}]8;;http://x\u{7}link\u{1B}]8;;\u{7} \u{1B}]52;c;aGk=\u{1B}\\ "
    + "over\rwrite\u{8} del\u{7F} c1\u{9B}2J end"
  private static let shown =
    "red \\u{1B}[31mtext\\u{1B}[0m \\u{1B}]8;;http://x\\u{7}link\\u{1B}]8;;\\u{7} \\u{1B}]52;c;aGk=\\u{1B}\\ "
    + "over\\rwrite\\u{8} del\\u{7F} c1\\u{9B}2J end"

  /// Whether `text` holds a control character other than newline and tab.
  private static func hasControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
  }

  func testNeutralized_escapesEveryControlButNewlineAndTab() {
    XCTAssertEqual(TerminalText.neutralized(Self.hostile), Self.shown)
    XCTAssertEqual(TerminalText.neutralized("line one\n\tindented ✓ été שלום 😀"), "line one\n\tindented ✓ été שלום 😀")
    XCTAssertEqual(TerminalText.neutralized("a\nb\tc", keepingLineBreaks: false), "a\\nb\\tc")
    XCTAssertFalse(Self.hasControl(TerminalText.neutralized(Self.hostile)))
  }

  func testJSONLine_escapesC1Too_andKeepsTheExactText() throws {
    let response = GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", text: Self.hostile), finishReason: .stop)],
      modelVersion: "m\u{1B}[2J")
    let summary = ResponseSummary(
      content: Self.hostile, response: response, mode: .onlyCloud, fallback: nil,
      timing: ResponseTiming(total: .milliseconds(5), timeToFirstToken: nil))
    let line = try summary.jsonLine()
    XCTAssertFalse(Self.hasControl(line), line)
    XCTAssertTrue(line.contains("\\u009b"), line)
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    XCTAssertEqual(object["content"] as? String, Self.hostile, "the value is unchanged")
    XCTAssertEqual(object["modelVersion"] as? String, "m\u{1B}[2J")
  }

  func testAnswersAndErrorsFromTheLoopbackServer_reachTheTerminalInert() throws {
    try Chat.requireBinary()
    let server = try LoopbackGemini()
    defer { server.stop() }
    // The echo model answers with the prompt: hostile text, streamed and not.
    for flags in [[], ["--no-stream"]] {
      let result = try Chat.run(
        ["--mode", "only-cloud", "--cloud-model", "echo"] + flags + [Self.hostile], environment: server.environment)
      XCTAssertEqual(result.status, 0, result.stderr)
      XCTAssertEqual(result.stdout, "echo: \(Self.shown)\n", "\(flags)")
      XCTAssertFalse(Self.hasControl(result.stdout + result.stderr), "\(flags)")
    }
    let json = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "echo", "--json", Self.hostile], environment: server.environment)
    XCTAssertEqual(json.status, 0, json.stderr)
    XCTAssertFalse(Self.hasControl(json.stdout), json.stdout)
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    XCTAssertEqual(object["content"] as? String, "echo: \(Self.hostile)", "--json keeps the exact text")
    // A server's error with escapes, C1 controls, line breaks and 100 KB.
    let failed = try Chat.run(
      ["--mode", "only-cloud", "--cloud-model", "fault-hostile-error", "Hi"], environment: server.environment)
    XCTAssertEqual(failed.status, 1)
    XCTAssertEqual(failed.stderrLines.count, 1, "one line, whatever the server wrote")
    XCTAssertFalse(Self.hasControl(failed.stderr), failed.stderr.prefix(120).debugDescription)
    XCTAssertLessThan(failed.stderr.utf8.count, 5000, "the message is cut")
    XCTAssertTrue(
      failed.stderr.hasPrefix("hybrid-chat: error: cloud API error 400"), failed.stderr.prefix(120).debugDescription)
  }
}
