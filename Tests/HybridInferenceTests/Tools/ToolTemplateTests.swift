import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The template families' call syntax, without a model: which family a
/// template is, how it renders tools and earlier calls, and how an answer in
/// its syntax is parsed and streamed.
final class ToolTemplateTests: XCTestCase {
  private static let templates = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chat-templates/templates")

  private func template(_ name: String) throws -> ChatTemplate {
    ChatTemplate(
      template: try String(contentsOf: Self.templates.appendingPathComponent(name), encoding: .utf8),
      bosToken: "<s>", eosToken: "</s>")
  }

  func testTemplateFamilies_areReadFromWhatTheTemplatePrintsForACall() throws {
    let triggers: [String: String?] = [
      "Qwen-Qwen2.5-7B-Instruct.jinja": "<tool_call>",
      "Qwen-Qwen3-0.6B.jinja": "<tool_call>",
      "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "<tool_call>",
      "ibm-granite-granite-4.0.jinja": "<tool_call>",
      "meta-llama-Llama-3.1-8B-Instruct.jinja": "{",
      "meta-llama-Llama-3.2-3B-Instruct.jinja": "{",
      "mistralai-Mistral-Nemo-Instruct-2407.jinja": "[TOOL_CALLS]",
      "Mistral-Small-3.2-24B-Instruct-2506.jinja": "[TOOL_CALLS]",
      "Qwen3-Coder.jinja": "<tool_call>",
      "GLM-4.6.jinja": "<tool_call>",
      "moonshotai-Kimi-K2.jinja": "<|tool_calls_section_begin|>",
      "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "<|START_ACTION|>",
      "deepseek-ai-DeepSeek-V3.1.jinja": "<｜tool▁calls▁begin｜>",
      "Apertus-8B-Instruct.jinja": "<|tools_prefix|>",
      "Kimi-K3.jinja": "<|open|>tools",
      "google-gemma-2-2b-it.jinja": nil,
      "LFM2.5-8B-A1B.jinja": nil,
    ]
    for (name, trigger) in triggers {
      XCTAssertEqual(try template(name).toolSyntax?.trigger, trigger, name)
    }
    XCTAssertEqual(try template("meta-llama-Llama-3.1-8B-Instruct.jinja").toolSyntax?.pattern?.allowsSeveral, false)
    XCTAssertEqual(try template("deepseek-ai-DeepSeek-V3.1.jinja").toolSyntax?.rendersTools, false)
    XCTAssertEqual(try template("Qwen3-Coder.jinja").toolSyntax?.rendersTools, true)
    let smolLM2 = ChatTemplate(
      template:
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    )
    XCTAssertNil(smolLM2.toolSyntax, "a template without tools gets the generic format")
  }

  func testQwenTemplate_rendersTheToolsAndAnEarlierCallAndItsOutput() throws {
    let qwen = try template("Qwen-Qwen2.5-7B-Instruct.jinja")
    var transcript = Transcript(entries: [.prompt("Weather in Paris?")])
    transcript.entries.append(
      .response(
        Content(role: "model", parts: [Part(functionCall: weatherCall("Paris", id: "abc123def"))]), modelVersion: "m"))
    transcript.entries.append(.toolOutputs([.output("Sunny", name: "get_weather", id: "abc123def")]))
    let messages = try ChatTemplate.messages(of: transcript, syntax: .hermes)
    XCTAssertEqual(messages.map(\.role), ["user", "assistant", "tool"])
    let tools = [AnyTool(WeatherTool()).declaration]
    let prompt = qwen.render(messages, tools: tools, log: .silent).text
    XCTAssertTrue(prompt.contains(#""name": "get_weather""#), prompt)
    XCTAssertTrue(
      prompt.contains("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"),
      prompt)
    XCTAssertTrue(prompt.contains("<tool_response>\nSunny\n</tool_response>"), prompt)
  }

  func testGenericFormat_writesCallsAndOutputsAsText() throws {
    var transcript = Transcript(entries: [.prompt("Weather?")])
    transcript.entries.append(
      .response(Content(role: "model", parts: [Part(functionCall: weatherCall("Oslo"))]), modelVersion: "m"))
    transcript.entries.append(.toolOutputs([.output("Snow", name: "get_weather", id: nil)]))
    let messages = try ChatTemplate.messages(of: transcript, syntax: .generic)
    XCTAssertEqual(messages.map(\.role), ["user", "assistant", "user"])
    XCTAssertEqual(messages[1].content, #"{"name": "get_weather", "arguments": {"city":"Oslo"}}"#)
    XCTAssertTrue(messages[2].content.hasPrefix("The tool get_weather returned: Snow"), messages[2].content)
  }

  func testParser_readsEachFamilysSyntax() throws {
    let hermes = try ToolCallParser.parse(
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
        + "<tool_call>{\"name\": \"now\", \"arguments\": \"{}\"}</tool_call>", syntax: .hermes)
    XCTAssertEqual(hermes.calls.map(\.name), ["get_weather", "now"])
    XCTAssertEqual(hermes.calls.map(\.argumentsJSON), [#"{"city":"Paris"}"#, "{}"])
    XCTAssertEqual(hermes.text, "")
    let llama = try ToolCallParser.parse(#" {"name": "get_weather", "parameters": {"city": "Rome"}}"#, syntax: .llama3)
    XCTAssertEqual(llama.calls.first?.argumentsJSON, #"{"city":"Rome"}"#)
    let mistral = try ToolCallParser.parse(
      #"[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "abcdefghi"}, "#
        + #"{"name": "now", "arguments": {}, "id": "bcdefghij"}]"#,
      syntax: .mistralJSON)
    XCTAssertEqual(mistral.calls.map(\.name), ["get_weather", "now"])
    let text = try ToolCallParser.parse("It is sunny.", syntax: .generic)
    XCTAssertEqual(text.text, "It is sunny.")
    XCTAssertTrue(text.calls.isEmpty)
    // Text that starts with a brace but not a call's opening is an answer
    // (SmolLM2 sometimes answers with code), not an unreadable call.
    let code = "{\n  const data = JSON.parse(text);\n"
    let answer = try ToolCallParser.parse(code, syntax: .generic)
    XCTAssertEqual(answer.text, code)
    XCTAssertTrue(answer.calls.isEmpty)
    XCTAssertThrowsError(try ToolCallParser.parse(#"{"name": "get_weather", "argu"#, syntax: .generic)) { error in
      guard case .generationFailed? = error as? HybridInferenceError else { return XCTFail("\(error)") }
    }
    XCTAssertTrue(Set(hermes.calls.compactMap(\.id)).count == 2, "each call has its own id")
  }

  func testStreamFilter_showsTextBeforeACall_andHoldsTheCallBack() throws {
    var filter = ToolCallStreamFilter(syntax: .hermes)
    var shown = ""
    for piece in ["Let me ", "check. <to", "ol_call>\n{\"name\": \"now\", ", "\"arguments\": {}}\n</tool_call>"] {
      shown += filter.feed(piece)
    }
    let (text, calls) = try filter.finish()
    XCTAssertEqual(shown, "Let me check. ")
    XCTAssertEqual(text, "")
    XCTAssertEqual(calls.map(\.name), ["now"])
    var plain = ToolCallStreamFilter(syntax: .hermes)
    XCTAssertEqual(plain.feed("a <b> <"), "a <b> ")
    XCTAssertEqual(plain.feed("c"), "<c")
    var generic = ToolCallStreamFilter(syntax: .generic)
    XCTAssertEqual(generic.feed("  "), "")
    XCTAssertEqual(generic.feed("Hi"), "  Hi")
  }

  func testTheTokenThatCompletesATrigger_mayOnlyCarryWhatTheGrammarTakes() {
    XCTAssertTrue(ToolCallSyntax.generic.openingAdmits(#""na"#))
    XCTAssertTrue(ToolCallSyntax.generic.openingAdmits(#" "name": ""#))
    XCTAssertFalse(ToolCallSyntax.generic.openingAdmits("\n"))
    XCTAssertFalse(ToolCallSyntax.generic.openingAdmits("}"))
    XCTAssertTrue(ToolCallSyntax.hermes.openingAdmits("\n{\""))
    XCTAssertTrue(ToolCallSyntax.hermes.openingAdmits("{"))
    XCTAssertFalse(ToolCallSyntax.hermes.openingAdmits("\n\n"))
    XCTAssertTrue(ToolCallSyntax.mistralJSON.openingAdmits("[{"))
    XCTAssertFalse(ToolCallSyntax.mistralJSON.openingAdmits("{"))
  }
}
