import HybridChatCore
import HybridInferenceCore
import XCTest

/// Where thoughts are shown, how they are framed, and how a stream's
/// thoughts are cut into the pieces each snapshot adds.
final class CLIThoughtDisplayTests: XCTestCase {
  private let faint = "\u{1B}[2m"
  private let normal = "\u{1B}[22m"

  func testStdoutATerminal_thoughtsDimmedBesideTheAnswer() {
    XCTAssertEqual(
      ThoughtDisplay.choose(for: ChatOptions(), stdoutIsTerminal: true, stderrIsTerminal: false),
      ThoughtDisplay(destination: .standardOutput, style: .dimmed))
  }

  func testStdoutRedirected_thoughtsOnStderr() {
    XCTAssertEqual(
      ThoughtDisplay.choose(for: ChatOptions(), stdoutIsTerminal: false, stderrIsTerminal: false),
      ThoughtDisplay(destination: .standardError, style: .framed))
    XCTAssertEqual(
      ThoughtDisplay.choose(for: ChatOptions(), stdoutIsTerminal: false, stderrIsTerminal: true),
      ThoughtDisplay(destination: .standardError, style: .dimmed))
  }

  func testHiddenAndJSONShowNone() {
    var hidden = ChatOptions()
    hidden.hideThoughts = true
    XCTAssertNil(ThoughtDisplay.choose(for: hidden, stdoutIsTerminal: true, stderrIsTerminal: true))
    XCTAssertNil(ThoughtDisplay.choose(for: ChatOptions(json: true), stdoutIsTerminal: true, stderrIsTerminal: true))
  }

  func testDimmedPiecesThenClose() {
    var framing = ThoughtFraming(style: .dimmed)
    XCTAssertEqual(framing.close(), "", "nothing to close before a thought")
    XCTAssertEqual(framing.thought(""), "")
    XCTAssertFalse(framing.isOpen, "an empty piece opens nothing")
    XCTAssertEqual(framing.thought("Let me"), faint + "Let me")
    XCTAssertEqual(framing.thought(" see."), " see.")
    XCTAssertEqual(framing.close(), normal + "\n", "back to normal, then the answer's own line")
    XCTAssertEqual(framing.close(), "")
    XCTAssertEqual(framing.thought("again\n"), faint + "again\n")
    XCTAssertEqual(framing.close(), normal, "a thought that ended its line gets no other")
  }

  func testFramedHasNoEscapes() {
    var framing = ThoughtFraming(style: .framed)
    var written = framing.thought("one") + framing.thought(" two") + framing.close()
    XCTAssertEqual(written, "[thinking]\none two\n[end of thinking]\n")
    written = framing.thought("three\n") + framing.close()
    XCTAssertEqual(written, "[thinking]\nthree\n[end of thinking]\n")
    XCTAssertFalse(written.contains("\u{1B}"))
  }

  /// The model's thought cannot drive the terminal: the faint and normal
  /// escapes are the only ones written.
  func testThoughtControlCharactersAreNeutralized() {
    var framing = ThoughtFraming(style: .dimmed)
    let written = framing.thought("a\u{1B}[22mb\u{1B}]52;c;eA==\u{07}\rc\u{9B}2J\td\n") + framing.close()
    XCTAssertEqual(written.components(separatedBy: "\u{1B}").count - 1, 2, written)
    XCTAssertTrue(written.hasPrefix(faint) && written.hasSuffix(normal), written)
    XCTAssertFalse(written.unicodeScalars.contains { $0.value == 0x07 || $0.value == 0x0D || $0.value == 0x9B })
    XCTAssertTrue(written.contains("\\u{1B}[22mb"), written)
    XCTAssertTrue(written.contains("\td\n"), "tab and line feed pass")
  }

  private func response(_ parts: [Part]) -> GenerateContentResponse {
    GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", parts: parts))], modelVersion: "m")
  }

  func testProgressGivesEachSnapshotsNewThought() {
    var progress = ThoughtProgress()
    XCTAssertEqual(progress.newThought(in: response([])), "")
    XCTAssertEqual(progress.newThought(in: response([Part(text: "Hmm, é", thought: true)])), "Hmm, é")
    XCTAssertEqual(progress.newThought(in: response([Part(text: "Hmm, é", thought: true)])), "")
    let grown = [Part(text: "Hmm, é 🌍", thought: true), Part(text: "Answer")]
    XCTAssertEqual(progress.newThought(in: response(grown)), " 🌍", "answer text is no thought")
    let twoParts = grown + [Part(text: "more", thought: true)]
    XCTAssertEqual(progress.newThought(in: response(twoParts)), "more")
    // A tool's round starts a new response, with less thought than shown.
    XCTAssertEqual(progress.newThought(in: response([Part(text: "next", thought: true)])), "next")
  }
}
