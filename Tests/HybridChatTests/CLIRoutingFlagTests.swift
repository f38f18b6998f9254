import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

/// Issue 25, point 5: the hybrid modes' routing flags.
final class CLIRoutingFlagTests: XCTestCase {
  private func options(_ arguments: [String]) throws -> ChatOptions {
    guard case .chat(let options) = try ArgumentParser.parse(arguments) else {
      XCTFail("expected a chat command for \(arguments)")
      return ChatOptions()
    }
    return options
  }

  func testDefaults_areDesignSection2sRule() throws {
    let hybrid = try options([]).hybridModel(
      primary: ScriptedCLIModel("a"), secondary: ScriptedCLIModel("b"))
    XCTAssertEqual(hybrid.fallback, .default)
    XCTAssertNil(hybrid.hedgeAfter)
    XCTAssertFalse(hybrid.continuesInterruptedAnswers)
  }

  func testFlags_reachTheHybrid() throws {
    let parsed = try options([
      "--fallback-on", "rate-limit,server-error", "--hedge-after=250", "--continue-interrupted", "hi",
    ])
    let hybrid = parsed.hybridModel(primary: ScriptedCLIModel("a"), secondary: ScriptedCLIModel("b"))
    XCTAssertEqual(hybrid.fallback, FallbackPolicy.default.adding(.rateLimited, .serverError))
    XCTAssertEqual(hybrid.hedgeAfter, .milliseconds(250))
    XCTAssertTrue(hybrid.continuesInterruptedAnswers)
    XCTAssertEqual(parsed.prompt, "hi")
    let all = try options(["--fallback-on", "timeout,connection-lost"]).fallbackPolicy
    XCTAssertEqual(all, FallbackPolicy.default.adding(.timedOut, .connectionLost))
  }

  func testBadValues_areUsageErrors() {
    for arguments in [
      ["--fallback-on", "rate-limit,nonsense"], ["--fallback-on", ""], ["--hedge-after", "-5"],
      ["--hedge-after", "soon"], ["--continue-interrupted=yes"],
    ] {
      do {
        _ = try ArgumentParser.parse(arguments)
        XCTFail("expected a usage error for \(arguments)")
      } catch {
        XCTAssertEqual(error.exitCode, 2, "\(arguments)")
      }
    }
  }
}

/// A model that is never asked: the flags tests only build hybrids.
private struct ScriptedCLIModel: LanguageModel {
  let modelVersion: String
  init(_ name: String) { modelVersion = name }
  var placement: ModelPlacement { .cloud }
  var availability: Availability { .available }
  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    .failing(HybridInferenceError.emptyPrompt)
  }
}
