import HybridChatCore
import XCTest

/// Command lines parsed as `hybrid-chat` parses them, for the flag tests.
extension XCTestCase {
  /// The chat options `arguments` give (a failure when they are another command).
  func chatOptions(_ arguments: [String]) throws -> ChatOptions {
    guard case .chat(let options) = try ArgumentParser.parse(arguments) else {
      XCTFail("expected a chat command for \(arguments)")
      return ChatOptions()
    }
    return options
  }

  /// The usage error `arguments` give, checked to exit with status 2.
  func usageMessage(of arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
    do {
      _ = try ArgumentParser.parse(arguments)
      XCTFail("expected a usage error for \(arguments)", file: file, line: line)
      return ""
    } catch {
      XCTAssertEqual(error.exitCode, 2, file: file, line: line)
      return error.message
    }
  }
}
