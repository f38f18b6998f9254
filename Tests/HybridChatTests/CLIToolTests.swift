import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import XCTest

/// `hybrid-chat --tool time`: parsing, the tool itself, and the built binary
/// running the tool loop against the loopback Gemini server.
final class CLIToolTests: XCTestCase {
  func testToolFlag_parsesAndRefusesUnknownTools() throws {
    guard case .chat(let options) = try ArgumentParser.parse(["--tool", "time", "--tool=time", "Hi"]) else {
      return XCTFail("expected a chat command")
    }
    XCTAssertEqual(options.tools, [.time])
    XCTAssertThrowsError(try ArgumentParser.parse(["--tool", "weather", "Hi"])) { error in
      XCTAssertEqual((error as? CommandError)?.exitCode, 2)
    }
  }

  func testTimeTool_reportsTheClockInISO8601() async throws {
    let tool = TimeTool(now: { Date(timeIntervalSince1970: 0) })
    let output = try await tool.call(arguments: TimeTool.Arguments())
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = .current
    XCTAssertTrue(output.hasPrefix(formatter.string(from: Date(timeIntervalSince1970: 0))), output)
    XCTAssertEqual(tool.name, "current_time")
  }

  func testBinary_runsTheTimeToolInTheCloudLoop() async throws {
    try HybridChatProcess.requireBinary()
    let server = try LoopbackGemini()
    defer { server.stop() }
    let result = try HybridChatProcess.run(
      ["--mode", "only-cloud", "--cloud-model", "tools", "--tool", "time", "--no-stream", "What time is it?"],
      environment: server.environment)
    XCTAssertEqual(result.status, 0, result.stderr)
    let year = Calendar.current.component(.year, from: Date())
    XCTAssertTrue(result.stdout.hasPrefix("done: \(year)-"), result.stdout)
  }
}
