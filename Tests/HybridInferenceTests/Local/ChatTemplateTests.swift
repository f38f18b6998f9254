import XCTest

@testable import HybridInference

final class ChatTemplateTests: XCTestCase {
  private let transcript = Transcript(
    instructions: "Be brief.",
    entries: [.prompt("Hi"), .response(Content(text: "Hello!"), modelVersion: "m"), .prompt("Bye")])

  func testSmolLM2Template_isRecognisedAndFormatsChatML() async throws {
    let model = try await LocalTestModels.smol().loadedModel(progress: nil)
    let template = ChatTemplate(template: model.chatTemplate)
    XCTAssertTrue(template.isRecognised, "llama.cpp must recognise SmolLM2's ChatML template")
    XCTAssertEqual(
      template.render(try ChatTemplate.messages(of: transcript)).text,
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        + "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
        + "<|im_start|>assistant\n")
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
