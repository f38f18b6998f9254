import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import XCTest

/// `--reasoning` (the device's thinking) and `--hide-thoughts`: what they
/// accept, what they refuse, and where they go.
final class CLIReasoningFlagTests: XCTestCase {
  func testLevelsAndBudgets() throws {
    let cases: [(String, GenerationOptions.Reasoning)] = [
      ("off", .off), ("light", .light), ("moderate", .moderate), ("deep", .deep),
      ("1", .budget(tokens: 1)), ("256", .budget(tokens: 256)),
      ("2147483647", .budget(tokens: 2_147_483_647)),
    ]
    for (value, reasoning) in cases {
      XCTAssertEqual(try chatOptions(["--reasoning", value, "hi"]).reasoning, reasoning, value)
      XCTAssertEqual(try chatOptions(["--reasoning=\(value)", "hi"]).reasoning, reasoning, value)
    }
    XCTAssertNil(try chatOptions(["hi"]).reasoning)
  }

  func testBadValuesNameWhatIsExpected() {
    for value in ["0", "-3", "sometimes", "1.5", "OFF", "", "2147483648", "99999999999999999999"] {
      let message = usageMessage(of: ["--reasoning=\(value)", "hi"])
      XCTAssertTrue(message.hasPrefix("option '--reasoning' needs off, light, moderate, deep or a number"), message)
      XCTAssertTrue(message.hasSuffix("got '\(value)'"), message)
    }
    XCTAssertEqual(usageMessage(of: ["--reasoning"]), "option '--reasoning' needs a value")
  }

  func testReasoningGoesToTheDeviceAndThinkingToTheCloud() throws {
    let both = try chatOptions(["--reasoning", "12", "--thinking", "high", "--max-tokens", "40", "hi"])
    XCTAssertEqual(
      both.generationOptions.foundationModels,
      GenerationOptions(maximumResponseTokens: 40, reasoning: .budget(tokens: 12)))
    XCTAssertEqual(
      both.generationOptions.gemini,
      GenerationConfig(maxOutputTokens: 40, thinkingConfig: ThinkingConfig(thinkingLevel: .high)))
    let deviceOnly = try chatOptions(["--reasoning", "off", "hi"])
    XCTAssertEqual(deviceOnly.generationOptions.foundationModels, GenerationOptions(reasoning: .off))
    XCTAssertNil(deviceOnly.generationOptions.gemini, "the cloud has its own flag")
  }

  func testHideThoughts() throws {
    XCTAssertTrue(try chatOptions(["--hide-thoughts", "hi"]).hideThoughts)
    XCTAssertFalse(try chatOptions(["hi"]).hideThoughts)
    XCTAssertEqual(usageMessage(of: ["--hide-thoughts=yes", "hi"]), "option '--hide-thoughts' takes no value")
  }

  /// The help tells the two thinking flags apart.
  func testHelpSaysWhichThinkingIsWhose() throws {
    let lines = HelpText.usage.split(separator: "\n").map(String.init)
    let reasoning = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("  --reasoning R ") })
    XCTAssertTrue(lines[reasoning].contains("on-device thinking"), lines[reasoning])
    XCTAssertTrue(lines[reasoning...].prefix(3).joined().contains("off | light | moderate |"))
    let thinking = try XCTUnwrap(lines.first { $0.hasPrefix("  --thinking LEVEL ") })
    XCTAssertTrue(thinking.contains("cloud (Gemini) thinking"), thinking)
  }
}
