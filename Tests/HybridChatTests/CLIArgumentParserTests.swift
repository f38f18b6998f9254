import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

@testable import HybridChatCore

/// The hand-written parser: every flag, both spellings of a value, the prompt
/// words, and every usage error.
final class CLIArgumentParserTests: XCTestCase {
  private func options(_ arguments: [String]) throws -> ChatOptions {
    guard case .chat(let options) = try ArgumentParser.parse(arguments) else {
      XCTFail("expected a chat command for \(arguments)")
      return ChatOptions()
    }
    return options
  }

  private func usageError(_ arguments: [String]) -> CommandError? {
    do {
      _ = try ArgumentParser.parse(arguments)
      XCTFail("expected a usage error for \(arguments)")
      return nil
    } catch {
      XCTAssertEqual(error.kind, .usage)
      XCTAssertEqual(error.exitCode, 2)
      return error
    }
  }

  /// Flags and their help come from one table (`Flag`): every flag the
  /// parser takes is in the help with its value, and every option the help
  /// names is one the parser takes.
  func testHelp_listsEveryFlagTheParserTakes_andNoOther() {
    let usage = HelpText.usage
    for flag in Flag.allCases {
      let shown = flag.spelling + (flag.valueName.map { " " + $0 } ?? "")
      // A flag too long for the column stands alone on its line.
      let listed = ["  \(shown) ", ", \(shown) ", "  \(shown)\n"].contains { usage.contains($0) }
      XCTAssertTrue(listed, "the help lacks \(shown)")
      do {
        _ = try ArgumentParser.parse([flag.spelling] + (flag.takesValue ? ["1"] : []))
      } catch {
        XCTAssertNotEqual(error.message, "unknown option '\(flag.spelling)'")
      }
    }
    let words = usage.split(whereSeparator: { " \n,.()".contains($0) })
    let named = Set(words.filter { $0.hasPrefix("-") && $0.count > 1 })
    XCTAssertEqual(named.count, Flag.allCases.count + 1, "every flag and -h: \(named.sorted())")
    for name in named {
      XCTAssertNotNil(Flag(spelling: String(name)), "the help names \(name), which the parser refuses")
    }
  }

  func testNoArgumentsGiveTheDefaults() throws {
    XCTAssertEqual(try options([]), ChatOptions())
    XCTAssertEqual(ChatOptions().cloudModel, "gemini-3.1-flash-lite")
  }

  func testHelpAndVersion() throws {
    XCTAssertEqual(try ArgumentParser.parse(["--help"]), .help)
    XCTAssertEqual(try ArgumentParser.parse(["-h"]), .help)
    XCTAssertEqual(try ArgumentParser.parse(["--json", "--help", "prompt"]), .help)
    XCTAssertEqual(try ArgumentParser.parse(["--version"]), .version)
  }

  func testEveryFlag() throws {
    let parsed = try options([
      "--mode", "prefer-cloud", "--model", "/m.gguf", "--cloud-model", "gemini-x",
      "--system", "Be brief.", "--temperature", "0.7", "--top-p", "0.9", "--top-k", "40",
      "--seed", "7", "--max-tokens", "64", "--thinking", "high", "--no-stream", "--json",
      "Why", "is", "the", "sky", "blue?",
    ])
    XCTAssertEqual(
      parsed,
      ChatOptions(
        prompt: "Why is the sky blue?", mode: .preferCloud, model: .path("/m.gguf"),
        cloudModel: "gemini-x", systemInstructions: "Be brief.", temperature: 0.7, topP: 0.9,
        topK: 40, seed: 7, maxTokens: 64, thinking: .high, noStream: true, json: true))
  }

  func testServerAndServerModel() throws {
    let parsed = try options(["--server", "http://127.0.0.1:8080/v1", "--server-model=smollm2", "hi"])
    XCTAssertEqual(parsed.server, "http://127.0.0.1:8080/v1")
    XCTAssertEqual(parsed.serverModel, "smollm2")
    XCTAssertNil(try options(["--server", "https://fleet.example/v1"]).serverModel, "the default name")
    XCTAssertTrue(
      usageError(["--server", "fleet:8080"])?.message.contains("http(s) URL") == true, "no scheme")
    XCTAssertTrue(usageError(["--server", "ftp://x/v1"])?.message.contains("--server") == true)
    XCTAssertTrue(usageError(["--server-model", "m"])?.message.contains("needs '--server URL'") == true)
    XCTAssertNotNil(usageError(["--server"]), "needs a value")
  }

  func testVertexProjectAndLocation() throws {
    let parsed = try options(["--vertex-project", "my-project", "--vertex-location=europe-west4", "hi"])
    XCTAssertEqual(parsed.vertexProject, "my-project")
    XCTAssertEqual(parsed.vertexLocation, "europe-west4")
    XCTAssertTrue(parsed.usesVertexAI)
    XCTAssertTrue(try options(["--vertex-location", "global"]).usesVertexAI, "the project from GOOGLE_CLOUD_PROJECT")
    XCTAssertFalse(try options([]).usesVertexAI)
    XCTAssertTrue(usageError(["--vertex-location", "us central1"])?.message.contains("region") == true)
    XCTAssertTrue(usageError(["--vertex-location", "evil.example/x"])?.message.contains("region") == true)
    XCTAssertNotNil(usageError(["--vertex-project"]), "needs a value")
    XCTAssertTrue(
      usageError(["--vertex-project", "p", "--server", "http://127.0.0.1:8080/v1"])?.message.contains("--server")
        == true)
  }

  func testEveryMode() throws {
    for mode in InferenceMode.allCases {
      XCTAssertEqual(try options(["--mode", mode.rawValue]).mode, mode)
    }
  }

  func testEveryThinkingLevel() throws {
    let levels: [String: ThinkingConfig.ThinkingLevel] = [
      "minimal": .minimal, "low": .low, "medium": .medium, "high": .high,
    ]
    for (name, level) in levels {
      XCTAssertEqual(try options(["--thinking", name]).thinking, level)
    }
  }

  func testEqualsSpelling() throws {
    let parsed = try options(["--temperature=0", "--max-tokens=8", "--system=a=b", "hi"])
    XCTAssertEqual(parsed.temperature, 0)
    XCTAssertEqual(parsed.maxTokens, 8)
    XCTAssertEqual(parsed.systemInstructions, "a=b")
    XCTAssertEqual(parsed.prompt, "hi")
  }

  func testPromptWordsAnywhereAndAfterDoubleDash() throws {
    XCTAssertEqual(try options(["one", "--json", "two"]).prompt, "one two")
    XCTAssertEqual(try options(["--", "--json", "-x"]).prompt, "--json -x")
    XCTAssertEqual(try options(["what", "is", "-5"]).prompt, "what is -5")
    XCTAssertNil(try options(["--json"]).prompt)
  }

  func testLastRepeatedFlagWins() throws {
    XCTAssertEqual(try options(["--seed", "1", "--seed", "2"]).seed, 2)
  }

  func testBoundaryValuesAreAccepted() throws {
    XCTAssertEqual(try options(["--top-p", "1"]).topP, 1)
    XCTAssertEqual(try options(["--seed", "0"]).seed, 0)
    XCTAssertEqual(try options(["--seed", "2147483647"]).seed, 2_147_483_647)
    XCTAssertEqual(try options(["--top-k", "1"]).topK, 1)
  }

  func testUnknownFlag() {
    XCTAssertEqual(usageError(["--frobnicate"])?.message, "unknown option '--frobnicate'")
    XCTAssertEqual(usageError(["-x", "hi"])?.message, "unknown option '-x'")
    XCTAssertEqual(usageError(["--frob=1"])?.message, "unknown option '--frob'")
  }

  func testMissingValue() {
    for flag in [
      "--mode", "--model", "--cloud-model", "--system", "--temperature", "--top-p", "--top-k",
      "--seed", "--max-tokens", "--thinking",
    ] {
      XCTAssertEqual(usageError([flag])?.message, "option '\(flag)' needs a value", flag)
      XCTAssertEqual(
        usageError([flag, "--json"])?.message, "option '\(flag)' needs a value", flag)
    }
    XCTAssertEqual(usageError(["--model="])?.message, "option '--model' needs a value")
  }

  func testValueOnASwitch() {
    XCTAssertEqual(usageError(["--json=yes"])?.message, "option '--json' takes no value")
  }

  func testBadNumbers() {
    let cases: [[String]] = [
      ["--temperature", "warm"], ["--temperature", "-1"], ["--temperature", "nan"],
      ["--temperature", "inf"], ["--top-p", "0"], ["--top-p", "1.5"], ["--top-k", "0"],
      ["--top-k", "2.5"], ["--seed", "-1"], ["--seed", "2147483648"], ["--seed", "x"],
      ["--max-tokens", "0"], ["--max-tokens", "ten"],
    ]
    for arguments in cases {
      let error = usageError(arguments)
      XCTAssertEqual(
        error?.message.hasPrefix("option '\(arguments[0])' needs "), true, "\(arguments)")
      XCTAssertEqual(error?.message.hasSuffix("got '\(arguments[1])'"), true, "\(arguments)")
    }
  }

  func testBadModeAndThinkingLevel() {
    XCTAssertEqual(
      usageError(["--mode", "cloud"])?.message,
      "unknown mode 'cloud' for --mode (expected prefer-on-device|prefer-cloud|only-on-device|only-cloud)"
    )
    XCTAssertEqual(
      usageError(["--thinking", "max"])?.message,
      "unknown level 'max' for --thinking (expected minimal|low|medium|high)")
  }

  func testErrorLineIsOneLineWithExitStatus() {
    let usage = CommandError.usage("unknown option '--x'")
    XCTAssertEqual(usage.line, "hybrid-chat: error: unknown option '--x' (see 'hybrid-chat --help')")
    let runtime = CommandError.runtime("first\nsecond")
    XCTAssertEqual(runtime.line, "hybrid-chat: error: first second")
    XCTAssertEqual(runtime.exitCode, 1)
  }
}
