import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The device and media: a new prompt with an attachment is unsupported
/// there (so prefer-on-device falls back with the attachment and logs it),
/// and attachments of earlier turns reach it as placeholders, so the chat
/// stays on device. The real llama.cpp on the tiny random-weight model.
final class MediaDeviceTests: XCTestCase {
  private let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A])
  private var photo: Prompt { Prompt("What is this?", attachments: [.image(png, mimeType: "image/png")]) }
  private static let short = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 4))

  private func assertUnsupported(_ error: (any Error)?, file: StaticString = #filePath, line: UInt = #line) {
    guard case .unsupportedRequest(let why)? = error as? HybridInferenceError else {
      return XCTFail("expected unsupportedRequest, got \(String(describing: error))", file: file, line: line)
    }
    XCTAssertTrue(why.contains("reads text only") && why.contains("image/png"), why, file: file, line: line)
  }

  func testMessages_earlierAttachmentsArePlaceholders_theNewOneIsUnsupported() throws {
    let earlier = Transcript(entries: [
      .prompt(photo), .response(Content(text: "A cat."), modelVersion: "gemini"),
      .prompt(Prompt(attachments: [.file(uri: "gs://b/v.mp4", mimeType: "video/mp4")])),
      .response(
        Content(parts: [
          Part(text: "Here:"), Part(inlineData: .init(mimeType: "image/webp", data: Data(count: 12_345))),
        ]),
        modelVersion: "gemini"),
      .prompt(
        Prompt(attachments: [
          .data(Data(count: 3_400_000), mimeType: "audio/wav\u{1B}[2J"),
          .data(Data(count: 1), mimeType: "application/pdf"),
        ])),
      .response(Content(text: "Noise."), modelVersion: "gemini"),
      .prompt("Is it black?"),
    ])
    let messages = try ChatTemplate.messages(of: earlier)
    XCTAssertEqual(
      messages.map(\.content),
      [
        "What is this?\n[image: image/png, 7 bytes]", "A cat.", "[file: video/mp4]",
        "Here:\n[image: image/webp, 12 KB]", "[audio: unknown type, 3.4 MB]\n[attachment: application/pdf, 1 byte]",
        "Noise.", "Is it black?",
      ])
    XCTAssertEqual(messages.map(\.role), ["user", "assistant", "user", "assistant", "user", "assistant", "user"])

    // The new prompt with media, alone or before a tool round's outputs.
    assertUnsupported(
      Result { try ChatTemplate.messages(of: Transcript(entries: [.prompt(photo)])) }.failure)
    let midRound = Transcript(entries: [
      .prompt(photo), .response(Content(parts: [Part(functionCall: .init(name: "look"))]), modelVersion: "m"),
      .toolOutputs([.output("ok", name: "look", id: nil)]),
    ])
    assertUnsupported(Result { try ChatTemplate.messages(of: midRound) }.failure)
  }

  func testPlaceholderSizes() {
    XCTAssertEqual(DeviceMedia.size(0), "0 bytes")
    XCTAssertEqual(DeviceMedia.size(1), "1 byte")
    XCTAssertEqual(DeviceMedia.size(999), "999 bytes")
    XCTAssertEqual(DeviceMedia.size(1_499), "1 KB")
    XCTAssertEqual(DeviceMedia.size(1_500), "2 KB")
    XCTAssertEqual(DeviceMedia.size(3_449_999), "3.4 MB")
    XCTAssertEqual(DeviceMedia.size(Int.max), "9223372036854.8 MB", "no overflow")
  }

  func testPreferOnDevice_fallsBackWithTheImage_beforeTheModelLoads_andLogsIt() async throws {
    let local = try LocalTestModels.tiny()
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["A cat."]), .answer(["Streamed."])])
    let log = LogRecorder()
    let session = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud), logHandler: log.handler)
    let answer = try await session.respond(to: photo, options: Self.short)
    XCTAssertEqual(answer.rawResponse.modelVersion, "cloud")
    XCTAssertEqual(cloud.requests.first?.transcript.entries.last?.content.parts, photo.parts, "the image intact")
    XCTAssertFalse(local.hasLoadedModel, "refused before the model loaded")
    XCTAssertEqual(log.fallbacks.count, 1)
    let line = try XCTUnwrap(log.records.first { $0.fallback != nil }?.message)
    XCTAssertTrue(line.contains("reads text only"), line)
    XCTAssertTrue(line.contains(LocalSystemModel.modelVersion) && line.contains("cloud"), line)

    var streamed = ""
    for try await snapshot in session.streamResponse(to: photo, options: Self.short) { streamed = snapshot.content }
    XCTAssertEqual(streamed, "Streamed.")
    XCTAssertEqual(cloud.requests.last?.transcript.entries.last?.content.parts, photo.parts)
    XCTAssertEqual(log.fallbacks.count, 2)
  }

  func testAfterAnImage_theNextTextTurnStaysOnDevice_readingAPlaceholder() async throws {
    let local = try LocalTestModels.tiny()
    let cloud = ScriptedModel("cloud", placement: .cloud, script: [.answer(["A cat."])])
    let log = LogRecorder()
    let session = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud), logHandler: log.handler)
    _ = try await session.respond(to: photo, options: Self.short)
    let second = try await session.respond(to: "Is it black?", options: Self.short)
    XCTAssertEqual(second.rawResponse.modelVersion, LocalSystemModel.modelVersion, "answered on device")
    XCTAssertEqual(cloud.requests.count, 1, "only the turn with the image went to the cloud")
    XCTAssertEqual(log.fallbacks.count, 1)
    XCTAssertEqual(session.transcript.entries.first?.content.parts, photo.parts, "the session keeps the image")

    // What the device read: the first turn's image as its placeholder.
    let seen = Transcript(entries: Array(session.transcript.entries.dropLast()))
    let model = try await local.loadedModel(progress: nil)
    let rendered = model.template.render(try ChatTemplate.messages(of: seen))
    XCTAssertTrue(rendered.text.contains("What is this?\n[image: image/png, 7 bytes]"), rendered.text)
    XCTAssertEqual(second.rawResponse.usageMetadata?.promptTokenCount, try model.tokenize(rendered).count)
  }

  func testOnlyOnDevice_mediaIsATypedError_andCountTokensRefusesIt() async throws {
    let local = try LocalTestModels.tiny()
    let session = GenerativeModelSession(model: local, logHandler: .silent)
    assertUnsupported(await captureError { try await session.respond(to: self.photo, options: Self.short) })
    XCTAssertTrue(session.transcript.entries.isEmpty)
    XCTAssertFalse(local.hasLoadedModel)
    let error = await captureError { try await local.countTokens(self.photo) }
    guard case .unsupportedRequest? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let text = try await local.countTokens(Prompt("Hello there"))
    let expected = try await local.countTokens("Hello there")
    XCTAssertEqual(text, expected)
  }
}

extension Result {
  /// The error, when there is one.
  fileprivate var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
