import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `Prompt` and `Attachment` on their own and through a session of scripted
/// models: the order of parts, what is refused before anything is sent, the
/// transcript, and the base64 arithmetic of the size limit.
final class MediaPromptTests: XCTestCase {
  private let png = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])
  private struct Label: Generable { var name: String }
  private static let schema = Label.generationSchema

  func testParts_areTheTextThenEachAttachmentInOrder() {
    let prompt = Prompt(
      "Compare these.",
      attachments: [
        .image(png, mimeType: "image/png"), .data(Data([7]), mimeType: "audio/wav"),
        .file(uri: "gs://bucket/clip.mp4", mimeType: "video/mp4"),
      ])
    XCTAssertEqual(
      prompt.parts,
      [
        Part(text: "Compare these."), Part(inlineData: Part.Blob(mimeType: "image/png", data: png)),
        Part(inlineData: Part.Blob(mimeType: "audio/wav", data: Data([7]))),
        Part(fileData: Part.FileData(mimeType: "video/mp4", fileUri: "gs://bucket/clip.mp4")),
      ])
    XCTAssertEqual(Prompt(attachments: [.image(png, mimeType: "image/png")]).parts.count, 1, "no empty text part")
    let literal: Prompt = "Hi"
    XCTAssertEqual(literal, Prompt("Hi"))
  }

  func testAttachmentsAlone_areAPrompt_andTheTranscriptKeepsThem() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["A cat."]), .answer(["Yes."])])
    let session = GenerativeModelSession(model: cloud, logHandler: .silent)
    let answer = try await session.respond(to: Prompt(attachments: [.image(png, mimeType: "image/png")]))
    XCTAssertEqual(answer.content, "A cat.")
    let entry = try XCTUnwrap(session.transcript.entries.first)
    XCTAssertEqual(entry.role, .user)
    XCTAssertEqual(entry.content.parts, [Part(inlineData: Part.Blob(mimeType: "image/png", data: png))])
    // The next turn sends the picture again, with the whole conversation.
    _ = try await session.respond(to: "Is it black?")
    let second = try XCTUnwrap(cloud.requests.last)
    XCTAssertEqual(second.transcript.entries.first?.content.parts.first?.inlineData?.data, png)
    XCTAssertEqual(second.transcript.entries.last?.text, "Is it black?")
  }

  func testEmptyPrompt_isRefusedBeforeAnythingIsSent() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let session = GenerativeModelSession(model: cloud, logHandler: .silent)
    for prompt in [Prompt(), Prompt("")] {
      let error = await captureError { try await session.respond(to: prompt) }
      guard case .emptyPrompt? = error as? HybridInferenceError else { return XCTFail("\(String(describing: error))") }
      var streamed: (any Error)?
      do {
        for try await _ in session.streamResponse(to: prompt) {}
      } catch {
        streamed = error
      }
      guard case .emptyPrompt? = streamed as? HybridInferenceError else {
        return XCTFail("\(String(describing: streamed))")
      }
    }
    XCTAssertTrue(cloud.requests.isEmpty)
  }

  func testMalformedAttachments_areInvalidAttachment_beforeAnythingIsSent() async throws {
    let cloud = ScriptedModel("cloud", placement: .cloud)
    let session = GenerativeModelSession(model: cloud, logHandler: .silent)
    let cases: [(Attachment, String)] = [
      (.image(png, mimeType: "application/pdf"), "image/ MIME type"),
      (.image(png, mimeType: "png"), "type/subtype"),
      (.data(png, mimeType: "image/png; charset=x"), "type/subtype"),
      (.data(png, mimeType: "a/b/c"), "type/subtype"),
      (.data(png, mimeType: ""), "type/subtype"),
      (.data(Data(), mimeType: "audio/wav"), "empty"),
      (.file(uri: "", mimeType: "video/mp4"), "URI"),
      (.file(uri: "no scheme here", mimeType: "video/mp4"), "URI"),
      (.file(uri: "gs://b/x\u{1B}[2J", mimeType: "video/mp4"), "URI"),
      (.file(uri: "https://x/" + String(repeating: "a", count: 9000), mimeType: "video/mp4"), "URI"),
    ]
    for (attachment, expected) in cases {
      let prompt = Prompt("Look", attachments: [.image(png, mimeType: "image/png"), attachment])
      let error = await captureError { try await session.respond(to: prompt, schema: Self.schema) }
      guard case .invalidAttachment(let why)? = error as? HybridInferenceError else {
        XCTFail("\(attachment.mimeType), \(expected): \(String(describing: error))")
        continue
      }
      XCTAssertTrue(why.hasPrefix("attachment 2:"), why)
      XCTAssertTrue(why.contains(expected), "\(why) should say \(expected)")
    }
    XCTAssertTrue(cloud.requests.isEmpty, "nothing reached the model")
    XCTAssertTrue(session.transcript.entries.isEmpty)
  }

  func testBase64Length_isFourPerThreeBytesRoundedUp_andOverflowIsNil() {
    XCTAssertEqual(InlineMediaSize.base64Length(of: 0), 0)
    XCTAssertEqual(InlineMediaSize.base64Length(of: 1), 4)
    XCTAssertEqual(InlineMediaSize.base64Length(of: 3), 4)
    XCTAssertEqual(InlineMediaSize.base64Length(of: 4), 8)
    XCTAssertEqual(InlineMediaSize.base64Length(of: 75_000_000), 100_000_000)
    XCTAssertEqual(InlineMediaSize.base64Length(of: 7), Data(count: 7).base64EncodedString().utf8.count)
    XCTAssertNil(InlineMediaSize.base64Length(of: Int.max))
    XCTAssertNil(InlineMediaSize.base64Length(of: -1))
  }

  func testInlineMediaLimit_sumsEveryTurn_andIgnoresFileURIs() throws {
    let image = Transcript.Entry.prompt(Prompt("a", attachments: [.image(Data(count: 6), mimeType: "image/png")]))
    let file = Transcript.Entry.prompt(Prompt(attachments: [.file(uri: "gs://b/v", mimeType: "video/mp4")]))
    let transcript = Transcript(entries: [image, .response(Content(text: "ok"), modelVersion: "m"), image, file])
    XCTAssertEqual(InlineMediaSize.encodedBytes(in: transcript), 16)
    XCTAssertNoThrow(try InlineMediaSize.check(transcript, limit: 16))
    XCTAssertThrowsError(try InlineMediaSize.check(transcript, limit: 15)) { error in
      guard case .requestTooLarge(let bytes, let limit)? = error as? HybridInferenceError else {
        return XCTFail("\(error)")
      }
      XCTAssertEqual(bytes, 16)
      XCTAssertEqual(limit, 15)
    }
    XCTAssertNoThrow(try InlineMediaSize.check(Transcript(entries: [.prompt("text")]), limit: -5), "text goes")
  }
}
