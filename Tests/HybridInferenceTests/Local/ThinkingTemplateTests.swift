import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama

/// Thinking templates as the device renders them: `enable_thinking` and
/// `reasoning_content` byte for byte as jinja2 renders Qwen3's and SmolLM3's
/// (the committed reference renders, Tests/Fixtures/chat-templates), and the
/// closed block for a template without a switch.
final class ThinkingTemplateTests: XCTestCase {
  private static let fixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chat-templates")

  private struct Conversation: Decodable {
    struct Message: Decodable {
      var role: String
      var content: String
      var reasoningContent: String?

      enum CodingKeys: String, CodingKey {
        case role, content
        case reasoningContent = "reasoning_content"
      }
    }
    var name: String
    var addGenerationPrompt: Bool
    var enableThinking: Bool?
    var messages: [Message]

    enum CodingKeys: String, CodingKey {
      case name, messages
      case addGenerationPrompt = "add_generation_prompt"
      case enableThinking = "enable_thinking"
    }
  }

  private struct Reference: Decodable {
    struct Row: Decodable { var output: String? }
    var results: [String: [Row]]
  }

  func testQwen3AndSmolLM3_renderTheSwitchAndEarlierReasoningAsJinja2Does() throws {
    let conversations = try JSONDecoder().decode(
      [Conversation].self,
      from: Data(contentsOf: Self.fixtures.appendingPathComponent("conversations.json")))
    let reference = try JSONDecoder().decode(
      Reference.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("expected.json")))
    let names = [
      "thinking off", "thinking on", "earlier reasoning", "reasoning in the last answer, no generation prompt",
    ]
    for file in ["Qwen-Qwen3-0.6B.jinja", "HuggingFaceTB-SmolLM3-3B.jinja"] {
      let source = try String(contentsOf: Self.fixtures.appendingPathComponent("templates/\(file)"), encoding: .utf8)
      let template = ChatTemplate(template: source, bosToken: "<|bos|>", eosToken: "<|eos|>")
      let rows = try XCTUnwrap(reference.results[file])
      for (index, conversation) in conversations.enumerated() where names.contains(conversation.name) {
        let switchSetting = ThinkingSwitch(
          template: source, reasoning: conversation.enableThinking == false ? .off : nil)
        XCTAssertEqual(switchSetting.syntax, .think, file)
        let messages = conversation.messages.map {
          ChatTemplate.Message(role: $0.role, content: $0.content, reasoningContent: $0.reasoningContent)
        }
        var rendered = template.render(
          messages, addGenerationPrompt: conversation.addGenerationPrompt,
          switches: switchSetting.variables, log: .silent)
        switchSetting.closeBlock(in: &rendered)
        XCTAssertEqual(rendered.text, rows[index].output, "\(file) × \(conversation.name)")
      }
    }
  }

  func testOffWithoutASwitch_closesTheBlockAfterTheGenerationPrompt() {
    let opens = "{% for m in messages %}{{ m.content }}{% endfor %}<think>\n{# </think> #}"
    let plain = "{% for m in messages %}{{ m.content }}{% endfor %}{# '</think>' #}"
    for (source, expected) in [(opens, "Hi<think>\n\n</think>\n\n"), (plain, "Hi<think>\n\n</think>\n\n")] {
      let off = ThinkingSwitch(template: source, reasoning: .off)
      XCTAssertNil(off.enableThinking)
      var rendered = ChatTemplate(template: source).render([.init(role: "user", content: "Hi")], log: .silent)
      off.closeBlock(in: &rendered)
      XCTAssertEqual(rendered.text, expected)
      XCTAssertFalse(ThoughtSyntax.think.isOpened(by: rendered.text))
      // Left on, the prompt is the template's own.
      var untouched = ChatTemplate(template: source).render([.init(role: "user", content: "Hi")], log: .silent)
      ThinkingSwitch(template: source, reasoning: .deep).closeBlock(in: &untouched)
      XCTAssertEqual(untouched.text, source == opens ? "Hi<think>\n" : "Hi")
    }
    // A template that does not think is left alone.
    var rendered = ChatTemplate(template: "{{ messages[0].content }}").render(
      [.init(role: "user", content: "Hi")], log: .silent)
    ThinkingSwitch(template: "{{ messages[0].content }}", reasoning: .off).closeBlock(in: &rendered)
    XCTAssertEqual(rendered.text, "Hi")
  }

  func testEffortLevels_becomeGptOssReasoningEffort() throws {
    let source = try String(
      contentsOf: Self.fixtures.appendingPathComponent("templates/openai-gpt-oss-120b.jinja"), encoding: .utf8)
    let template = ChatTemplate(template: source)
    let levels: [(GenerationOptions.Reasoning?, String)] = [
      (nil, "medium"), (.light, "low"), (.moderate, "medium"), (.deep, "high"),
    ]
    for (reasoning, effort) in levels {
      let switches = ThinkingSwitch(template: source, reasoning: reasoning).variables
      let text = template.render([.init(role: "user", content: "Hi")], switches: switches, log: .silent).text
      XCTAssertTrue(text.contains("Reasoning: \(effort)\n"), "\(String(describing: reasoning)): \(text)")
    }
    // gpt-oss cannot switch thinking off: `.off` writes an empty analysis channel.
    let off = ThinkingSwitch(template: source, reasoning: .off)
    XCTAssertEqual(off.syntax, .harmony)
    var rendered = template.render([.init(role: "user", content: "Hi")], switches: off.variables, log: .silent)
    off.closeBlock(in: &rendered)
    XCTAssertTrue(
      rendered.text.hasSuffix(
        "<|start|>assistant<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>"),
      rendered.text)
    // A template without the variable is not given it.
    XCTAssertTrue(ThinkingSwitch(template: "{{ messages }}", reasoning: .light).variables.isEmpty)
  }

  func testDeviceThoughts_goToTheTemplateAsReasoningContent_anotherBackendsNever() throws {
    let thought = Part(text: "7 × 143 = 1001.", thought: true)
    let answer = Part(text: "No.")
    let transcript = Transcript(entries: [
      .prompt("Is 1001 prime?"),
      .response(Content(role: "model", parts: [thought, answer]), modelVersion: LocalSystemModel.modelVersion),
      .prompt("And 1009?"),
      .response(
        Content(role: "model", parts: [Part(text: "cloud summary", thought: true), Part(text: "Prime.")]),
        modelVersion: "gemini-2.5-flash", producer: "https://generativelanguage.googleapis.com/v1beta/models/x"),
      .prompt("Thanks"),
    ])
    let messages = try ChatTemplate.messages(of: transcript)
    XCTAssertEqual(messages[1].content, "No.")
    XCTAssertEqual(messages[1].reasoningContent, "7 × 143 = 1001.")
    XCTAssertEqual(messages[3].content, "Prime.")
    XCTAssertNil(messages[3].reasoningContent)
    // Through the transcript's JSON form, as a restored session has it.
    let restored = try JSONDecoder().decode(Transcript.self, from: JSONEncoder().encode(transcript))
    XCTAssertEqual(try ChatTemplate.messages(of: restored), messages)
  }
}
