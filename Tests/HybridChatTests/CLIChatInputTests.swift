import HybridChatCore
import XCTest

/// Where the prompt comes from, and what a typed chat line means.
final class CLIChatInputTests: XCTestCase {
  private func source(_ prompt: String?, terminal: Bool, stdin: String = "")
    throws(CommandError) -> PromptSource
  {
    try PromptSource.resolve(argumentPrompt: prompt, stdinIsTerminal: terminal) { stdin }
  }

  func testArgumentsWin() throws {
    XCTAssertEqual(try source("hi", terminal: true), .oneShot("hi"))
    XCTAssertEqual(try source("hi", terminal: false, stdin: "ignored"), .oneShot("hi"))
  }

  func testTerminalWithoutPromptIsAChat() throws {
    XCTAssertEqual(try source(nil, terminal: true), .interactive)
  }

  func testPipedPromptIsTrimmed() throws {
    XCTAssertEqual(try source(nil, terminal: false, stdin: "  Why?\n\n"), .oneShot("Why?"))
  }

  func testEmptyPrompts() {
    for (prompt, stdin) in [("", ""), (" \n\t", ""), (nil, ""), (nil, " \n")] as [(String?, String)] {
      XCTAssertThrowsError(try source(prompt, terminal: false, stdin: stdin)) { error in
        XCTAssertEqual((error as? CommandError)?.kind, .usage)
        XCTAssertEqual((error as? CommandError)?.message.hasPrefix("the prompt is empty"), true)
      }
    }
  }

  func testChatLines() {
    XCTAssertEqual(ChatInput(line: "  Hello  "), .prompt("Hello"))
    XCTAssertEqual(ChatInput(line: ""), .empty)
    XCTAssertEqual(ChatInput(line: "   "), .empty)
    XCTAssertEqual(ChatInput(line: "/quit"), .quit)
    XCTAssertEqual(ChatInput(line: "/exit"), .quit)
    XCTAssertEqual(ChatInput(line: "/reset"), .reset)
    XCTAssertEqual(ChatInput(line: "/help"), .help)
    XCTAssertEqual(ChatInput(line: "/mode"), .showMode)
    XCTAssertEqual(ChatInput(line: "/mode only-cloud"), .mode(.onlyCloud))
    XCTAssertEqual(ChatInput(line: "//etc/hosts?"), .prompt("/etc/hosts?"))
  }

  func testBadChatCommands() {
    guard case .invalid(let why) = ChatInput(line: "/mode cloud") else {
      return XCTFail("expected invalid")
    }
    XCTAssertTrue(why.hasPrefix("unknown mode 'cloud'"))
    guard case .invalid(let unknown) = ChatInput(line: "/frob") else {
      return XCTFail("expected invalid")
    }
    XCTAssertTrue(unknown.hasPrefix("unknown command '/frob'"))
    guard case .invalid = ChatInput(line: "/quit now") else { return XCTFail("expected invalid") }
  }
}
