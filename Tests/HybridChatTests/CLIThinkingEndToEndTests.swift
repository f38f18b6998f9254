import Foundation
import XCTest

/// The built `hybrid-chat` with a model that thinks: `--reasoning` reaches
/// the device, the thoughts stay off a redirected stdout, `--json` carries
/// them, and bad values are usage errors.
final class CLIThinkingEndToEndTests: XCTestCase {
  private typealias Chat = HybridChatProcess

  override func setUpWithError() throws {
    try Chat.requireBinary()
  }

  /// The budget closes the block after 4 thought tokens (the end tag adds
  /// more), leaving the rest of the 30 for the answer.
  private func arguments(_ extra: [String]) throws -> [String] {
    ["--model", try ThinkingModelFile.require(), "--mode", "only-on-device", "--max-tokens", "30", "--seed", "1"]
      + extra + ["Hi"]
  }

  func testRedirectedStdoutGetsTheAnswerAlone() throws {
    let result = try Chat.run(try arguments(["--reasoning", "4"]))
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertFalse(result.stdout.isEmpty)
    XCTAssertFalse(result.stdout.contains("think"), result.stdout)
    XCTAssertFalse(result.stdout.contains("\u{1B}"), "no escape on a file")
    XCTAssertFalse(result.stderr.contains("\u{1B}"), "no escape on a file")
    // The thoughts on stderr, framed, then the report.
    let lines = result.stderrLines
    XCTAssertEqual(lines.first, "[thinking]", result.stderr)
    let end = try XCTUnwrap(lines.firstIndex(of: "[end of thinking]"), result.stderr)
    XCTAssertGreaterThan(end, 1, "some thought between the frames")
    XCTAssertTrue(lines.last?.hasPrefix("You used: ") == true, result.stderr)
    XCTAssertTrue(lines.last?.contains(" thought + ") == true, result.stderr)
    XCTAssertFalse(result.stderr.contains("</think>"), result.stderr)
  }

  func testJSONHasTheThoughts() throws {
    let result = try Chat.run(try arguments(["--reasoning", "4", "--json"]))
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stderr, "", "with --json, thoughts are in the object only")
    let object = try XCTUnwrap(
      JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let thoughts = try XCTUnwrap(object["thoughts"] as? String, result.stdout)
    XCTAssertFalse(thoughts.isEmpty)
    XCTAssertFalse((object["content"] as? String ?? "").isEmpty, "the budget left room for an answer")
    let usage = try XCTUnwrap(object["usage"] as? [String: Any])
    XCTAssertGreaterThan(usage["thoughtsTokenCount"] as? Int ?? 0, 0)
  }

  func testReasoningOffAndHideThoughtsShowNone() throws {
    let off = try Chat.run(try arguments(["--reasoning", "off", "--json"]))
    XCTAssertEqual(off.status, 0, off.stderr)
    let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(off.stdout.utf8)) as? [String: Any])
    XCTAssertNil(object["thoughts"], "off closes the block before the model writes")
    let hidden = try Chat.run(try arguments(["--reasoning", "4", "--hide-thoughts"]))
    XCTAssertEqual(hidden.status, 0, hidden.stderr)
    XCTAssertEqual(hidden.stderrLines.count, 1, hidden.stderr)
    XCTAssertTrue(hidden.stderr.hasPrefix("You used: "), hidden.stderr)
    XCTAssertFalse(hidden.stdout.isEmpty)
  }

  func testWithoutStreamingTheThoughtsComeFirst() throws {
    let result = try Chat.run(try arguments(["--reasoning", "4", "--no-stream"]))
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stderrLines.first, "[thinking]", result.stderr)
    XCTAssertTrue(result.stderrLines.contains("[end of thinking]"), result.stderr)
    XCTAssertFalse(result.stdout.isEmpty)
  }

  /// On a terminal the thoughts share stdout, dimmed, and end at normal
  /// intensity before the answer.
  func testTerminalShowsThoughtsDimmed() throws {
    let script = URL(fileURLWithPath: "/usr/bin/script")
    guard FileManager.default.isExecutableFile(atPath: script.path) else {
      throw XCTSkip("/usr/bin/script (util-linux) to provide a terminal")
    }
    let command = try arguments(["--reasoning", "4"]).map { "'\($0)'" }.joined(separator: " ")
    let result = try Chat.run(
      ["-q", "-e", "-c", "'\(Chat.binary.path)' \(command) < /dev/null", "/dev/null"], executable: script)
    XCTAssertEqual(result.status, 0, result.stdout)
    // The same seed gives the same answer as a run that hides its thoughts.
    let expected = try Chat.run(try arguments(["--reasoning", "4", "--hide-thoughts"])).stdout
    XCTAssertFalse(expected.isEmpty)
    // The terminal writes each line feed as a carriage return and a line feed.
    let transcript = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
    let faint = try XCTUnwrap(transcript.range(of: "\u{1B}[2m"), transcript)
    let normal = try XCTUnwrap(transcript.range(of: "\u{1B}[22m"), transcript)
    XCTAssertLessThan(faint.upperBound, normal.lowerBound, "some thought, dimmed")
    XCTAssertFalse(transcript.contains("[thinking]"), "no frame on a terminal")
    let afterThoughts = transcript[normal.upperBound...]
    XCTAssertFalse(afterThoughts.contains("\u{1B}[2m"), "the answer is not dimmed")
    XCTAssertTrue(afterThoughts.hasPrefix("\n" + expected), "the answer on its own line: \(transcript)")
    XCTAssertTrue(afterThoughts.contains("You used: "), transcript)
  }

  /// Ctrl-C in the middle of dimmed thoughts: the command closes them, so
  /// the shell's prompt after it is not drawn faint, and exits 130.
  func testCtrlCDuringThoughtsLeavesNormalIntensity() throws {
    let script = URL(fileURLWithPath: "/usr/bin/script")
    guard FileManager.default.isExecutableFile(atPath: script.path) else {
      throw XCTSkip("/usr/bin/script (util-linux) to provide a terminal")
    }
    // Greedy, the tiny model thinks until the context (2048 tokens) is full:
    // a second or more, time enough to interrupt it.
    let model = try ThinkingModelFile.require()
    let command =
      "'\(Chat.binary.path)' --model '\(model)' --mode only-on-device --max-tokens 4000"
      + " --reasoning deep --temperature 0 Hi"
    let running = try Chat.start(
      ["-q", "-e", "-c", command, "/dev/null"], executable: script, typing: true)
    let deadline = Date().addingTimeInterval(60)
    while running.process.isRunning, Date() < deadline, !running.stdoutSoFar.contains("\u{1B}[2m") {
      usleep(2_000)
    }
    XCTAssertTrue(running.process.isRunning, "the answer ended before it could be interrupted")
    // The terminal turns Ctrl-C (ETX) into SIGINT for the command.
    try running.type("\u{03}")
    let result = try running.wait(timeout: 30)
    XCTAssertEqual(result.status, 130, result.stdout)
    let transcript = result.stdout
    XCTAssertFalse(transcript.contains("You used: "), "the answer ended before it could be interrupted")
    let faint = try XCTUnwrap(transcript.range(of: "\u{1B}[2m", options: .backwards), transcript)
    let normal = try XCTUnwrap(
      transcript.range(of: "\u{1B}[22m", options: .backwards), "the thoughts were left faint")
    XCTAssertLessThan(faint.upperBound, normal.lowerBound)
    XCTAssertEqual(transcript[normal.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines), "")
  }

  func testBadReasoningIsAUsageError() throws {
    for value in ["0", "sometimes"] {
      let result = try Chat.run(["--reasoning", value, "Hi"])
      XCTAssertEqual(result.status, 2, result.stderr)
      XCTAssertEqual(result.stdout, "")
      XCTAssertTrue(result.stderr.hasPrefix("hybrid-chat: error: option '--reasoning' needs off, light"), result.stderr)
      XCTAssertTrue(result.stderr.contains("got '\(value)'"), result.stderr)
    }
  }
}
