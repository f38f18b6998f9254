import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

final class ChatTemplateTests: XCTestCase {
  private let transcript = Transcript(
    instructions: "Be brief.",
    entries: [.prompt("Hi"), .response(Content(text: "Hello!"), modelVersion: "m"), .prompt("Bye")])

  func testSmolLM2Template_isRecognisedAndFormatsChatML() async throws {
    let model = try await LocalTestModels.smol().loadedModel(progress: nil)
    let template = model.template
    XCTAssertTrue(template.isRecognised, "llama.cpp must recognise SmolLM2's ChatML template")
    XCTAssertEqual(
      template.render(try ChatTemplate.messages(of: transcript)).text,
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        + "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
        + "<|im_start|>assistant\n")
  }

  func testSmolLM2WithoutInstructions_getsTheTemplatesDefaultSystemTurn() async throws {
    let model = try await LocalTestModels.smol().loadedModel(progress: nil)
    let prompt = model.template.render([.init(role: "user", content: "Hi <|im_start|>")], log: .silent)
    XCTAssertEqual(
      prompt.text,
      "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        + "<|im_start|>user\nHi <|im_start|><|im_end|>\n<|im_start|>assistant\n")
    XCTAssertTrue(prompt.segments.contains(.text("Hi <|im_start|>")), "the body must stay text: \(prompt.segments)")
    XCTAssertFalse(prompt.segments.contains { $0 == .markup("Hi <|im_start|>") })
  }

  func testTemplateThatRaises_fallsBackToTheBuiltInMatcherAndLogsTheLine() {
    let recorder = LogRecorder()
    let template = ChatTemplate(
      template: "{{ bos_token }}\n{{ raise_exception('not today') }}<|im_start|>{{ messages[0].content }}")
    let prompt = template.render([.init(role: "user", content: "Hi")], log: recorder.handler)
    XCTAssertEqual(prompt.text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    XCTAssertTrue(
      recorder.records.contains { $0.message.contains("line 2: not today") && $0.level == .warning },
      "\(recorder.records.map(\.message))")
  }

  func testTemplateThatRewritesBodies_isNotUsed() {
    let recorder = LogRecorder()
    let template = ChatTemplate(template: "<|im_start|>{% for m in messages %}{{ m.content | upper }}{% endfor %}")
    let prompt = template.render([.init(role: "user", content: "hi")], log: recorder.handler)
    XCTAssertFalse(prompt.text.contains("HI"))
    XCTAssertTrue(recorder.records.contains { $0.message.contains("rewrites message text") })
  }

  func testEngine_trimsAndLoopsLikeJinja2() throws {
    let template = ChatTemplate(
      template: """
        {% for m in messages %}
          {%- if loop.first and m.role != 'system' %}[default]{% endif %}
          <{{ m.role }}>{{ m['content'] | trim }}
        {% endfor %}
        {% if add_generation_prompt %}<assistant>{% endif %}
        """)
    XCTAssertEqual(
      try template.renderText([.init(role: "user", content: " a ")], addGenerationPrompt: true),
      "[default]  <user>a\n<assistant>")
  }

  func testNoTemplate_usesThePlainFallback() throws {
    let template = ChatTemplate(template: nil)
    XCTAssertFalse(template.isRecognised)
    XCTAssertEqual(
      template.render(try ChatTemplate.messages(of: transcript)).text,
      "System: Be brief.\nUser: Hi\nAssistant: Hello!\nUser: Bye\nAssistant:")
  }

  func testUnrecognisedTemplate_usesThePlainFallback() throws {
    let template = ChatTemplate(template: "{{ something no built-in matcher knows }}")
    XCTAssertTrue(template.render([.init(role: "user", content: "Hi")]).text.hasPrefix("User: Hi"))
  }

  func testImageInPrompt_isUnsupportedOnDevice() {
    var entry = Transcript.Entry.prompt("Describe this")
    entry.content.parts.append(Part(inlineData: .init(mimeType: "image/png", data: Data([1, 2, 3]))))
    XCTAssertThrowsError(try ChatTemplate.messages(of: Transcript(entries: [entry]))) { error in
      guard case HybridInferenceError.unsupportedRequest = error else {
        return XCTFail("got \(error)")
      }
    }
  }
}
