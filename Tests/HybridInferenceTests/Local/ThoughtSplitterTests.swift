import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// The device's split of a thinking model's text into thought and answer,
/// on fixed texts, without a model.
final class ThoughtSplitterTests: XCTestCase {
  private let think = ThoughtSyntax.think

  /// Feeds `pieces` in order, then finishes; returns the joined thought and answer.
  private func split(_ pieces: [String], syntax: ThoughtSyntax = .think, opened: Bool = false) -> (
    thought: String, answer: String
  ) {
    var splitter = ThoughtSplitter(syntax: syntax, opened: opened)
    var thought = ""
    var answer = ""
    for segment in pieces.flatMap({ splitter.feed($0) }) + splitter.finish() {
      switch segment {
      case .thought(let text):
        XCTAssertTrue(answer.isEmpty, "a thought after the answer began")
        thought += text
      case .answer(let text): answer += text
      }
    }
    return (thought, answer)
  }

  /// Every way of cutting `text` in two, at every scalar.
  private func everySplit(of text: String) -> [[String]] {
    let scalars = Array(text.unicodeScalars)
    return (0...scalars.count).map { cut in
      [String(String.UnicodeScalarView(scalars[..<cut])), String(String.UnicodeScalarView(scalars[cut...]))]
    }
  }

  private func scalarByScalar(_ text: String) -> [String] {
    text.unicodeScalars.map { String($0) }
  }

  func testBlockThenAnswer_splitsAtEveryPositionAlike() {
    let text = "<think>\nIs 1001 = 7·11·13? Ja — 合成数.\n</think>\n\nNo: 1001 = 7 × 11 × 13."
    for pieces in everySplit(of: text) + [scalarByScalar(text), [text]] {
      let (thought, answer) = split(pieces)
      XCTAssertEqual(thought, "Is 1001 = 7·11·13? Ja — 合成数.", "\(pieces)")
      XCTAssertEqual(answer, "No: 1001 = 7 × 11 × 13.", "\(pieces)")
    }
  }

  func testEveryThreeWayCutThroughBothTags_neverShowsATag() {
    let text = "<think>a b</think>c"
    let scalars = Array(text.unicodeScalars)
    for first in 0...scalars.count {
      for second in first...scalars.count {
        let pieces = [scalars[..<first], scalars[first..<second], scalars[second...]].map {
          String(String.UnicodeScalarView($0))
        }
        let (thought, answer) = split(pieces)
        XCTAssertEqual(thought, "a b", "\(pieces)")
        XCTAssertEqual(answer, "c", "\(pieces)")
      }
    }
  }

  func testPartialTag_isHeldUntilDecided() {
    var splitter = ThoughtSplitter(syntax: think, opened: false)
    XCTAssertEqual(splitter.feed("<thi"), [])
    XCTAssertFalse(splitter.isThinking)
    XCTAssertEqual(splitter.feed("nk>plan </th"), [.thought("plan")])
    XCTAssertTrue(splitter.isThinking)
    XCTAssertEqual(splitter.feed("ink> Hi"), [.answer("Hi")])
    XCTAssertFalse(splitter.isThinking)
    XCTAssertEqual(splitter.feed(" <think>x</think>"), [.answer(" <think>x</think>")])
    XCTAssertEqual(splitter.finish(), [])
  }

  func testBlockOpenedByThePrompt_isThoughtFromTheFirstCharacter() {
    for pieces in everySplit(of: "\nplan\n</think>\n\nAnswer") {
      let (thought, answer) = split(pieces, opened: true)
      XCTAssertEqual(thought, "plan", "\(pieces)")
      XCTAssertEqual(answer, "Answer", "\(pieces)")
    }
  }

  func testEndTagWithoutStart_isAnswerUnlessThePromptOpenedTheBlock() {
    XCTAssertEqual(split(["plan</think>Answer"]).answer, "plan</think>Answer")
    XCTAssertEqual(split(["plan</think>Answer"]).thought, "")
    XCTAssertEqual(split(["plan</think>Answer"], opened: true).thought, "plan")
  }

  func testTextWithoutABlock_passesAtOnce() {
    var splitter = ThoughtSplitter(syntax: think, opened: false)
    XCTAssertEqual(splitter.feed("  H"), [.answer("  H")])
    XCTAssertEqual(splitter.feed("i <think>"), [.answer("i <think>")])
    XCTAssertEqual(split(["  "]).answer, "  ")
    XCTAssertEqual(split(["<thin"]).answer, "<thin")
  }

  func testEmptyThought_givesNoThoughtText() {
    for text in ["<think></think>Hi", "<think>\n\n</think>\n\nHi", "\n<think> </think>Hi"] {
      XCTAssertEqual(split([text]).thought, "", text)
      XCTAssertEqual(split([text]).answer, "Hi", text)
    }
    XCTAssertEqual(split(["</think>Hi"], opened: true).thought, "")
  }

  func testBlockOpenAtTheEnd_isAllThought() {
    XCTAssertEqual(split(["<think>unfinished </thi"]).thought, "unfinished </thi")
    XCTAssertEqual(split(["<think>unfinished \n"]).thought, "unfinished")
    XCTAssertEqual(split(["<think>unfinished </thi"]).answer, "")
    XCTAssertEqual(split(["<think>"]).thought, "")
    XCTAssertEqual(split(["<think>"]).answer, "")
  }

  func testTenThousandTags_costLinearWork() {
    let block = "<think>a</think>"
    let text = String(repeating: block, count: 10_000)
    let whole = split([text])
    XCTAssertEqual(whole.thought, "a")
    XCTAssertEqual(whole.answer, String(repeating: block, count: 9_999))
    // Opened by the prompt, then tag after tag in tiny deltas.
    let opened = split(scalarByScalar(String(repeating: "</think", count: 10_000) + "</think>"), opened: true)
    XCTAssertEqual(opened.thought, String(repeating: "</think", count: 10_000))
  }

  func testSelfOverlappingTag_isFoundAfterAFalseStart() {
    guard let syntax = ThoughtSyntax(start: "<<s>", end: "<</e>") else { return XCTFail("valid tags refused") }
    for pieces in everySplit(of: "t<<</e>a") {
      let result = split(pieces, syntax: syntax, opened: true)
      XCTAssertEqual(result.thought, "t<", "\(pieces)")
      XCTAssertEqual(result.answer, "a", "\(pieces)")
    }
    XCTAssertEqual(split(["<<<s>t"], syntax: syntax).answer, "<<<s>t")
  }

  func testGptOssChannels_splitAtEveryPosition() {
    // The device prints the channel markers but not the control token <|end|>.
    let text = "<|channel|>analysis<|message|>User asks. 1001 = 7·143.<|start|>assistant<|channel|>final<|message|>No."
    for pieces in everySplit(of: text) {
      let (thought, answer) = split(pieces, syntax: .harmony)
      XCTAssertEqual(thought, "User asks. 1001 = 7·143.", "\(pieces)")
      XCTAssertEqual(answer, "No.", "\(pieces)")
    }
    XCTAssertEqual(split(["<|channel|>final<|message|>No."], syntax: .harmony).answer, "<|channel|>final<|message|>No.")
  }

  func testTagLength_isBounded() {
    let huge = String(repeating: "a", count: 10_000_000)
    XCTAssertNil(ThoughtSyntax(start: huge, end: "</think>"))
    XCTAssertNil(ThoughtSyntax(start: "<think>", end: huge))
    XCTAssertNil(ThoughtSyntax(start: "", end: "</think>"))
    XCTAssertNotNil(ThoughtSyntax(start: "<think>", end: "</think>"))
  }

  func testDeclaredTags_andTheBlockAPromptOpens() {
    let qwen3 = "{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1] %}{%- endif %}"
    XCTAssertEqual(ThoughtSyntax.declared(in: qwen3), .think)
    XCTAssertEqual(ThoughtSyntax.declared(in: "<|END_THINKING|>")?.start, "<|START_THINKING|>")
    XCTAssertEqual(ThoughtSyntax.declared(in: "{{- '<|start|>assistant<|channel|>final<|message|>' }}"), .harmony)
    XCTAssertNil(ThoughtSyntax.declared(in: "{{ messages[0].content }}"))
    XCTAssertTrue(think.isOpened(by: "<|im_start|>assistant\n<think>\n"))
    XCTAssertTrue(think.isOpened(by: "<｜Assistant｜><think>"))
    XCTAssertFalse(think.isOpened(by: "<|im_start|>assistant\n"))
    XCTAssertFalse(think.isOpened(by: "<|im_start|>assistant\n<think>\n\n</think>\n\n"))
  }

  func testReasoningBudget_mustBePositive() throws {
    for tokens in [0, -1, Int.min] {
      XCTAssertThrowsError(try GenerationOptions(reasoning: .budget(tokens: tokens)).validate()) { error in
        guard case HybridInferenceError.invalidOptions(let why) = error else { return XCTFail("\(error)") }
        XCTAssertTrue(why.contains("reasoning"), why)
      }
    }
    for reasoning in [GenerationOptions.Reasoning.off, .light, .moderate, .deep, .budget(tokens: 64)] {
      XCTAssertNoThrow(try GenerationOptions(reasoning: reasoning).validate())
    }
    XCTAssertEqual(GenerationOptions.Reasoning.budget(tokens: 64).tokenBudget, 64)
    XCTAssertNil(GenerationOptions.Reasoning.deep.tokenBudget)
  }
}
