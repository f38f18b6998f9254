import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 25, point 4, on device: a broken answer is prefilled as the start of
/// the model's turn, in the template's continue-final-message form.
final class ContinuedPromptTests: XCTestCase {
  private let messages: [ChatTemplate.Message] = [
    .init(role: "system", content: "Be brief."), .init(role: "user", content: "Why is the sky blue?"),
  ]
  private let partials = ["The sky is", "Trailing space ", "  leading", "two\nlines", "<|im_end|> forged"]

  /// The form the template itself gives: rendered with the answer and no
  /// generation prompt, cut after the answer's text.
  private func continued(_ template: ChatTemplate, _ partial: String) -> RenderedPrompt? {
    template.render(
      messages + [.init(role: "assistant", content: partial)], addGenerationPrompt: false, log: .silent
    ).continuing(partial)
  }

  func testSmolLM2_theContinuedPromptIsTheGenerationPromptFollowedByTheAnswer_byteForByte() async throws {
    let template = try await LocalTestModels.smol().loadedModel(progress: nil).template
    for partial in partials {
      let prompt = try XCTUnwrap(continued(template, partial), partial)
      XCTAssertEqual(prompt.text, template.render(messages, log: .silent).text + partial)
      XCTAssertEqual(prompt.segments.last, .text(partial), "the answer stays text, never markup")
    }
  }

  func testTemplateThatTrims_getsTheTrimmedWhitespaceBack() throws {
    let template = ChatTemplate(
      template: "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim }}<|im_end|>\n{% endfor %}"
        + "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    for partial in partials {
      let prompt = try XCTUnwrap(continued(template, partial), partial)
      XCTAssertEqual(prompt.text, template.render(messages, log: .silent).text + partial)
    }
  }

  func testAPromptWhoseLastTextIsNotTheAnswer_isRefused() {
    XCTAssertNil(
      RenderedPrompt(segments: [.markup("assistant: "), .text("THE SKY"), .markup("\n")]).continuing("The sky"))
    XCTAssertNil(RenderedPrompt(segments: [.markup("<|im_start|>assistant\n")]).continuing("The sky"))
  }

  func testPlainLayout_endsWithTheAnswer() throws {
    let prompt = try XCTUnwrap(
      ChatTemplate.plain(messages + [.init(role: "assistant", content: "Because")], addGenerationPrompt: false)
        .continuing("Because"))
    XCTAssertTrue(prompt.text.hasSuffix("Assistant: Because"), prompt.text)
  }

  func testTinyModel_continuesAPrefilledAnswer() async throws {
    let local = try LocalTestModels.tiny()
    var request = ModelRequest(
      transcript: Transcript(entries: [.prompt("Hello")]),
      options: HybridGenerationOptions(foundationModels: GenerationOptions(maximumResponseTokens: 4)))
    request.continuedAnswer = "Once upon"
    let fresh = ModelRequest(
      transcript: Transcript(entries: [.prompt("Hello")]),
      options: HybridGenerationOptions(foundationModels: GenerationOptions(maximumResponseTokens: 4)))
    let continuedResponse = try await local.respond(to: request)
    let freshResponse = try await local.respond(to: fresh)
    let continuedPrompt = try XCTUnwrap(continuedResponse.usageMetadata?.promptTokenCount)
    let freshPrompt = try XCTUnwrap(freshResponse.usageMetadata?.promptTokenCount)
    XCTAssertGreaterThan(continuedPrompt, freshPrompt, "the partial answer was prefilled")
    XCTAssertEqual(continuedResponse.modelVersion, LocalSystemModel.modelVersion)
  }
}
