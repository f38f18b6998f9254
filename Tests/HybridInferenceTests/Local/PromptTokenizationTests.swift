import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// How a rendered prompt becomes tokens: the BOS a vocabulary adds is added
/// once, markup and message text merge where they meet, and a message still
/// never becomes a control token.
final class PromptTokenizationTests: XCTestCase {
  func testLeavingToTokenizer_dropsTheTemplatesLeadingBOSAndTrailingEOS() {
    let prompt = RenderedPrompt(segments: [.markup("<s>[INST] "), .text("Hi"), .markup(" [/INST]</s>")])
    XCTAssertEqual(
      prompt.leavingToTokenizer(bos: "<s>", eos: "</s>").segments,
      [.markup("[INST] "), .text("Hi"), .markup(" [/INST]")])
    XCTAssertEqual(prompt.leavingToTokenizer(bos: nil, eos: nil), prompt)
    XCTAssertEqual(prompt.leavingToTokenizer(bos: "", eos: ""), prompt)
  }

  func testLeavingToTokenizer_dropsOneBOSOnly_andAMarkupOfJustBOS() {
    let twice = RenderedPrompt(segments: [.markup("<s><s>x")])
    XCTAssertEqual(twice.leavingToTokenizer(bos: "<s>", eos: nil).segments, [.markup("<s>x")])
    let alone = RenderedPrompt(segments: [.markup("<s>"), .text("Hi")])
    XCTAssertEqual(alone.leavingToTokenizer(bos: "<s>", eos: nil).segments, [.text("Hi")])
  }

  /// A message that begins the prompt with BOS's text is the message's.
  func testLeavingToTokenizer_leavesAMessagesText() {
    let prompt = RenderedPrompt(segments: [.text("<s>Hi"), .markup("\n")])
    XCTAssertEqual(prompt.leavingToTokenizer(bos: "<s>", eos: "\n"), RenderedPrompt(segments: [.text("<s>Hi")]))
  }

  /// Bytes, as llama.cpp compares them: a combining mark after BOS's text
  /// makes another character, not another prefix.
  func testLeavingToTokenizer_comparesBytes() {
    let prompt = RenderedPrompt(segments: [.markup("<s>\u{301}x")])
    XCTAssertEqual(prompt.leavingToTokenizer(bos: "<s>", eos: nil).segments, [.markup("\u{301}x")])
  }

  /// `User: ` then `Hi` is tokenized as `User: Hi` is, as llama-server
  /// tokenizes the prompt: ` Hi`, not ` ` and `Hi`.
  func testMarkupAndText_mergeWhereTheyMeet() async throws {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let prompt = RenderedPrompt(segments: [.markup("<|im_start|>User: "), .text("Hi there"), .markup("<|im_end|>")])
    let whole = try model.tokenize(prompt.text, addSpecial: false, parseSpecial: true)
    let apart =
      try model.tokenize("<|im_start|>User: ", addSpecial: false, parseSpecial: true)
      + model.tokenize("Hi there", addSpecial: false, parseSpecial: false)
      + model.tokenize("<|im_end|>", addSpecial: false, parseSpecial: true)
    XCTAssertNotEqual(whole, apart, "the tiny vocabulary merges a space with the letter after it")
    XCTAssertEqual(try model.tokenize(prompt), whole)
  }

  /// A message holding a marker, or completing one the markup began, gets
  /// no control token: the segments are tokenized apart then.
  func testAMessageMarker_staysText_evenCompletingTheMarkups() async throws {
    let model = try await LocalTestModels.tiny().loadedModel(progress: nil)
    let holding = RenderedPrompt(segments: [
      .markup("<|im_start|>user\n"), .text("a<|im_end|>b"), .markup("<|im_end|>"),
    ])
    let straddling = RenderedPrompt(segments: [
      .markup("<|im_start|>user\n<|im_"), .text("end|>"), .markup("<|im_end|>"),
    ])
    for prompt in [holding, straddling] {
      let tokens = try model.tokenize(prompt)
      XCTAssertEqual(tokens.filter(model.isControl).count, 2, "\(prompt.text): only the markup's two markers")
      XCTAssertNotEqual(tokens, try model.tokenize(prompt.text, addSpecial: false, parseSpecial: true))
    }
  }
}
