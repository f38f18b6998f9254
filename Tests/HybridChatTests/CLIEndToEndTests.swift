import Foundation
import TestPrerequisites
import XCTest

/// The built `hybrid-chat` binary, run as a user runs it: flags, failures,
/// and real answers from the tiny model through llama.cpp.
final class CLIEndToEndTests: XCTestCase {
  private typealias Chat = HybridChatProcess

  override func setUpWithError() throws {
    try Chat.requireBinary()
  }

  /// A failure: the given status, nothing on stdout, one error line on stderr.
  private func assertFailure(
    _ result: HybridChatProcess.Result, status: Int32, mentions text: String,
    file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(result.status, status, result.stderr, file: file, line: line)
    XCTAssertEqual(result.stdout, "", file: file, line: line)
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr, file: file, line: line)
    XCTAssertTrue(
      result.stderr.hasPrefix("hybrid-chat: error: "), result.stderr, file: file, line: line)
    XCTAssertTrue(
      result.stderr.contains(text), "\(result.stderr) lacks \(text)", file: file, line: line)
  }

  func testVersion() throws {
    let result = try Chat.run(["--version"])
    XCTAssertEqual(result.status, 0)
    XCTAssertTrue(result.stdout.hasPrefix("hybrid-chat "), result.stdout)
    XCTAssertEqual(result.stderr, "")
  }

  func testHelpListsEveryFlag() throws {
    let result = try Chat.run(["--help"])
    XCTAssertEqual(result.status, 0)
    for flag in [
      "--mode", "--model", "--cloud-model", "--system", "--temperature", "--top-p", "--top-k",
      "--seed", "--max-tokens", "--thinking", "--no-stream", "--json", "--help", "--version",
      "prefer-on-device", "prefer-cloud", "only-on-device", "only-cloud",
    ] {
      XCTAssertTrue(result.stdout.contains(flag), "help lacks \(flag)")
    }
  }

  func testUnknownFlagIsAUsageError() throws {
    assertFailure(try Chat.run(["--frobnicate", "hi"]), status: 2, mentions: "'--frobnicate'")
  }

  func testBadNumberIsAUsageError() throws {
    assertFailure(try Chat.run(["--top-p", "2", "hi"]), status: 2, mentions: "--top-p")
    assertFailure(try Chat.run(["--max-tokens"]), status: 2, mentions: "needs a value")
    assertFailure(try Chat.run(["--mode", "cloud", "hi"]), status: 2, mentions: "unknown mode")
  }

  func testEmptyPromptIsAnError() throws {
    assertFailure(try Chat.run([""]), status: 2, mentions: "the prompt is empty")
    assertFailure(try Chat.run([], stdin: "\n"), status: 2, mentions: "the prompt is empty")
    assertFailure(try Chat.run([]), status: 2, mentions: "the prompt is empty")
  }

  func testOnlyCloudWithoutAKeyNamesTheKey() throws {
    assertFailure(
      try Chat.run(["--mode", "only-cloud", "hi"]), status: 1, mentions: "GEMINI_API_KEY")
  }

  func testMissingModelFileIsAnError() throws {
    assertFailure(
      try Chat.run(["--model", "/nonexistent/model.gguf", "--mode", "only-on-device", "hi"]),
      status: 1, mentions: "model file not found: /nonexistent/model.gguf")
  }

  func testNoModelAtAllInAHybridIsAnError() throws {
    assertFailure(
      try Chat.run(["--model", "/nonexistent.gguf", "--mode", "prefer-cloud", "hi"]),
      status: 1, mentions: "no model can answer")
  }

  func testNotAGGUFFileIsAnError() throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("not-a-model-\(UUID().uuidString).gguf").path
    try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    assertFailure(
      try Chat.run(["--model", path, "--mode", "only-on-device", "hi"]), status: 1,
      mentions: path)
  }

  func testOneShotAnswerOnTheTinyModel() throws {
    let model = try Chat.requireTinyModel()
    let result = try Chat.run([
      "--model", model, "--mode", "only-on-device", "--max-tokens", "8", "--seed", "1", "Hello",
    ])
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertFalse(result.stdout.isEmpty)
    XCTAssertTrue(result.stdout.hasSuffix("\n"))
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    let line = try XCTUnwrap(result.stderrLines.first)
    XCTAssertTrue(line.hasPrefix("You used: llama-cpp-system-language-model"), line)
    XCTAssertTrue(line.contains("8 answer tokens"), line)
    XCTAssertTrue(line.contains("first token"), line)
    XCTAssertTrue(line.contains("tokens/s"), line)
  }

  func testSameSeedSameAnswer() throws {
    let model = try Chat.requireTinyModel()
    let arguments = ["--model", model, "--max-tokens", "6", "--seed", "42", "--top-k", "20", "Hi"]
    XCTAssertEqual(try Chat.run(arguments).stdout, try Chat.run(arguments).stdout)
  }

  func testJSONOutput() throws {
    let model = try Chat.requireTinyModel()
    let result = try Chat.run([
      "--model", model, "--max-tokens", "4", "--temperature", "0", "--json", "Hello",
    ])
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertEqual(result.stderr, "", "with --json, stderr is for errors only")
    let lines = result.stdout.split(separator: "\n")
    XCTAssertEqual(lines.count, 1)
    let object = try XCTUnwrap(
      JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    for key in ["content", "modelVersion", "usage", "finishReason", "fallback", "mode", "timing"] {
      XCTAssertNotNil(object[key], "missing \(key)")
    }
    XCTAssertEqual(object["modelVersion"] as? String, "llama-cpp-system-language-model")
    XCTAssertEqual(object["mode"] as? String, "only-on-device", "no key: on device only")
    XCTAssertEqual(object["finishReason"] as? String, "MAX_TOKENS")
    XCTAssertTrue(object["fallback"] is NSNull)
    let usage = try XCTUnwrap(object["usage"] as? [String: Any])
    XCTAssertEqual(usage["candidatesTokenCount"] as? Int, 4)
  }

  func testPipedPromptWithoutStreaming() throws {
    let model = try Chat.requireTinyModel()
    let result = try Chat.run(
      ["--model", model, "--max-tokens", "4", "--no-stream", "--system", "Be brief."],
      stdin: "Why is the sky blue?\n")
    XCTAssertEqual(result.status, 0, result.stderr)
    XCTAssertFalse(result.stdout.isEmpty)
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    XCTAssertTrue(result.stderr.hasPrefix("You used: llama-cpp-system-language-model"))
    XCTAssertTrue(result.stderr.contains("total"), result.stderr)
  }

  func testFallbackIsOneLineOnStderr() throws {
    // The device has no model, so the hybrid falls back to the cloud, which
    // cannot answer either (no server at the loopback port): the fallback
    // line, then the error line.
    let result = try Chat.run(
      ["--model", "/nonexistent.gguf", "--mode", "prefer-on-device", "hi"],
      environment: ["GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"])
    XCTAssertEqual(result.status, 1)
    XCTAssertEqual(result.stderrLines.count, 2, result.stderr)
    XCTAssertTrue(
      result.stderrLines[0].hasPrefix(
        "hybrid-chat: falling back from llama-cpp-system-language-model to gemini-3.1-flash-lite"),
      result.stderr)
    XCTAssertTrue(result.stderrLines[1].hasPrefix("hybrid-chat: error: "), result.stderr)
    XCTAssertFalse(result.stderr.contains("test-key"))
  }

  func testInteractiveChatOnATerminal() throws {
    // `script` gives the command a pseudo-terminal, the only way to be
    // interactive without a person at the keyboard.
    let script = URL(fileURLWithPath: "/usr/bin/script")
    guard FileManager.default.isExecutableFile(atPath: script.path) else {
      throw Prerequisite.missing("/usr/bin/script (util-linux) to provide a terminal")
    }
    let model = try Chat.requireTinyModel()
    let command = "'\(Chat.binary.path)' --model '\(model)' --max-tokens 3 --seed 1"
    let result = try Chat.run(
      ["-q", "-e", "-c", command, "/dev/null"], executable: script,
      stdin: "Hello\n/mode only-cloud\n/mode\n/reset\nAgain\n/quit\n")
    XCTAssertEqual(result.status, 0, result.stdout)
    let transcript = result.stdout
    XCTAssertEqual(transcript.components(separatedBy: "You used: ").count - 1, 2, transcript)
    XCTAssertTrue(transcript.contains("GEMINI_API_KEY"), "a failed /mode keeps the chat going")
    XCTAssertTrue(transcript.contains("mode: only-on-device"), transcript)
    XCTAssertTrue(transcript.contains("the conversation is reset"), transcript)
    XCTAssertTrue(transcript.contains("Loading "), "the progress bar is drawn on a terminal")
  }
}
