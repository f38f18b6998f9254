import Foundation
import GeminiServerProcess
import OpenAIServers
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Prompts with media on an OpenAI-compatible server: the body's shape, the
/// stub (which checks `content` arrays as OpenAI defines them and echoes the
/// media it decoded), and the real llama-server, which without a multimodal
/// projector refuses an image.
final class MediaOpenAITests: XCTestCase {
  private let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A])
  private var photo: Prompt { Prompt("Describe", attachments: [.image(png, mimeType: "image/png")]) }
  private var stub: GeminiServerProcess?
  private var llamaServer: LlamaServerProcess?

  override func tearDown() async throws {
    stub?.stop()
    llamaServer?.stop()
  }

  private func messages(_ prompt: Prompt) throws -> [[String: Any]] {
    let request = ModelRequest(transcript: Transcript(entries: [.prompt(prompt)]))
    let body = try RequestBodyEncoder.encode(ChatCompletionRequest(request, model: "m", stream: false))
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    return try XCTUnwrap(object["messages"] as? [[String: Any]])
  }

  func testBody_userTurnWithMedia_isAContentArray_textFirst() throws {
    let prompt = Prompt(
      "Describe",
      attachments: [
        .image(png, mimeType: "image/png"), .data(Data([1, 2, 3]), mimeType: "audio/wav"),
        .data(Data([4]), mimeType: "audio/mpeg"),
      ])
    let content = try XCTUnwrap(try messages(prompt).first?["content"] as? [[String: Any]])
    XCTAssertEqual(content.count, 4)
    XCTAssertEqual(content[0] as? [String: String], ["type": "text", "text": "Describe"])
    XCTAssertEqual(content[1]["type"] as? String, "image_url")
    XCTAssertEqual(
      (content[1]["image_url"] as? [String: String])?["url"], "data:image/png;base64," + png.base64EncodedString())
    XCTAssertEqual(content[2]["type"] as? String, "input_audio")
    XCTAssertEqual(content[2]["input_audio"] as? [String: String], ["data": "AQID", "format": "wav"])
    XCTAssertEqual((content[3]["input_audio"] as? [String: String])?["format"], "mp3")
    // A turn without media keeps the plain string every server takes.
    XCTAssertEqual(try messages("Hello").first?["content"] as? String, "Hello")
  }

  func testBody_mediaTheProtocolCannotCarry_isUnsupported() {
    let refused: [(String, Transcript)] = [
      ("pdf", Transcript(entries: [.prompt(Prompt("Read", attachments: [.data(png, mimeType: "application/pdf")]))])),
      ("ogg", Transcript(entries: [.prompt(Prompt(attachments: [.data(png, mimeType: "audio/ogg")]))])),
      ("file", Transcript(entries: [.prompt(Prompt(attachments: [.file(uri: "gs://b/v", mimeType: "video/mp4")]))])),
      (
        "answer",
        Transcript(entries: [
          .prompt("Draw"),
          .response(Content(parts: [Part(inlineData: .init(mimeType: "image/png", data: png))]), modelVersion: "g"),
          .prompt("Thanks"),
        ])
      ),
    ]
    for (name, transcript) in refused {
      XCTAssertThrowsError(try ChatCompletionRequest(ModelRequest(transcript: transcript), model: "m", stream: false)) {
        guard case .unsupportedRequest? = $0 as? HybridInferenceError else { return XCTFail("\(name): \($0)") }
      }
    }
  }

  func testStub_readsTheImage_unaryAndStreamed() async throws {
    let stub = try OpenAITestServers.stub()
    self.stub = stub
    let fleet = OpenAICompatibleModel(
      name: "echo", baseURL: stub.openAIBaseURL, apiKey: nil, requestOptions: .fastTests, logHandler: .silent)
    let session = GenerativeModelSession(model: fleet, logHandler: .silent)
    let answer = try await session.respond(to: photo)
    XCTAssertEqual(answer.content, "echo: Describe[image/png, 7 bytes]")
    var last = ""
    let audio = Prompt(attachments: [.data(Data([1, 2, 3, 4]), mimeType: "audio/wav")])
    for try await snapshot in session.streamResponse(to: audio) { last = snapshot.content }
    XCTAssertEqual(last, "echo: [wav audio, 4 bytes]")
    XCTAssertEqual(session.transcript.entries.count, 4)
  }

  func testStub_seesNothing_forUnsupportedMediaOrOverTheLimit() async throws {
    let stub = try OpenAITestServers.stub()
    self.stub = stub
    let name = "echo~" + uniqueID()
    var options = RequestOptions.fastTests
    options.maximumInlineMediaBytes = 11
    let fleet = OpenAICompatibleModel(
      name: name, baseURL: stub.openAIBaseURL, apiKey: nil, requestOptions: options, logHandler: .silent)
    let session = GenerativeModelSession(model: fleet, logHandler: .silent)
    let tooLarge = await captureError { try await session.respond(to: self.photo) }
    guard case .requestTooLarge(12, 11)? = tooLarge as? HybridInferenceError else {
      return XCTFail("\(String(describing: tooLarge))")
    }
    let pdf = await captureError {
      try await session.respond(to: Prompt(attachments: [.data(Data([1]), mimeType: "application/pdf")]))
    }
    guard case .unsupportedRequest? = pdf as? HybridInferenceError else { return XCTFail("\(String(describing: pdf))") }
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 0)
  }

  /// llama-server (the pinned build) without `--mmproj` answers an image
  /// with 500 "image input is not supported - hint: ... provide the mmproj":
  /// it does not drop the image and answer from the text. The library passes
  /// the image on as `image_url` and reports the server's refusal as the
  /// typed `.cloudAPI` error, message intact; nothing falls back (a reached
  /// server is not offline).
  func testRealLlamaServer_withoutAProjector_refusesTheImage() async throws {
    let server = try await OpenAITestServers.llamaServer()
    llamaServer = server
    let fleet = OpenAICompatibleModel(
      name: "fleet-model", baseURL: server.baseURL, apiKey: nil,
      requestOptions: RequestOptions(retryPolicy: RetryPolicy(maxAttempts: 1)), logHandler: .silent)
    let session = GenerativeModelSession(model: fleet, logHandler: .silent)
    let error = await captureError { try await session.respond(to: self.photo) }
    guard case .cloudAPI(let apiError)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertEqual(apiError.httpStatus, 500)
    XCTAssertTrue(apiError.message.contains("image input is not supported"), apiError.message)
    XCTAssertTrue(session.transcript.entries.isEmpty)
    // The same server answers the text of a turn without media.
    let text = try await session.respond(
      to: "Hello", options: .gemini(GenerationConfig(temperature: 0, maxOutputTokens: 4, seed: 1)))
    XCTAssertEqual(text.rawResponse.modelVersion, "fleet-model")
  }
}
