import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Prompts with media through every entry point against the loopback Gemini
/// server, which checks `inlineData` (base64 `data`, a MIME type) and
/// `fileData` the way the google-genai types define them and echoes each
/// media part it decoded as `[image/png, 7 bytes]`.
final class MediaCloudTests: CloudTestCase {
  private let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A])
  private var photo: Prompt { Prompt("Describe", attachments: [.image(png, mimeType: "image/png")]) }

  private struct Caption: Generable {
    var subject: String
    var count: Int
  }

  /// The parts of the last turn of the last request for `model`.
  private func lastParts(_ model: String) async throws -> [[String: Any]] {
    let last = try await server.lastRequest(model)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    return try XCTUnwrap(contents.last?["parts"] as? [[String: Any]])
  }

  /// The text part then the image, base64, as the wire has them.
  private func assertTextThenImage(_ parts: [[String: Any]], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(parts.count, 2, file: file, line: line)
    XCTAssertEqual(parts.first?["text"] as? String, "Describe", file: file, line: line)
    let blob = parts.last?["inlineData"] as? [String: Any]
    XCTAssertEqual(blob?["mimeType"] as? String, "image/png", file: file, line: line)
    XCTAssertEqual(blob?["data"] as? String, png.base64EncodedString(), file: file, line: line)
  }

  func testRespond_sendsTheTextThenTheImage_andTheTranscriptKeepsIt() async throws {
    let model = "echo~" + uniqueID()
    let session = session(model)
    let answer = try await session.respond(to: photo)
    XCTAssertEqual(answer.content, "echo: Describe[image/png, 7 bytes]")
    assertTextThenImage(try await lastParts(model))
    XCTAssertEqual(session.transcript.entries.first?.content.parts, photo.parts)
    // The next turn sends the picture again, in the first turn.
    _ = try await session.respond(to: "And now?")
    let last = try await server.lastRequest(model)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    XCTAssertEqual(contents.count, 3)
    assertTextThenImage(try XCTUnwrap(contents.first?["parts"] as? [[String: Any]]))
  }

  func testStreamResponse_sendsTheImage() async throws {
    let model = "echo~" + uniqueID()
    var last = ""
    for try await snapshot in session(model).streamResponse(to: photo) { last = snapshot.content }
    XCTAssertEqual(last, "echo: Describe[image/png, 7 bytes]")
    let request = try await server.lastRequest(model)
    XCTAssertEqual(request["query"] as? String, "alt=sse")
    assertTextThenImage(try await lastParts(model))
  }

  func testStructuredEntryPoints_sendTheImageWithTheSchema() async throws {
    let model = "json~" + uniqueID()
    let session = session(model)
    let caption = try await session.respond(to: photo, generating: Caption.self)
    XCTAssertEqual(caption.content.count, 7)
    assertTextThenImage(try await lastParts(model))
    let schema = try GenerationSchema(
      jsonSchema: #"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#)
    let value = try await session.respond(to: photo, schema: schema)
    XCTAssertEqual(value.content, .object(["n": .number(7)]))
    assertTextThenImage(try await lastParts(model))
    let streamed = try await session.streamResponse(to: photo, generating: Caption.self).collect()
    XCTAssertEqual(streamed.content.count, 7)
    assertTextThenImage(try await lastParts(model))
    let requests = try await server.allRequests(model)
    XCTAssertEqual(requests.count, 3)
    for request in requests {
      let body = try XCTUnwrap(request["body"] as? [String: Any])
      XCTAssertNotNil((body["generationConfig"] as? [String: Any])?["responseJsonSchema"])
    }
  }

  func testWithTools_everyRoundSendsTheImage() async throws {
    let model = "tools~" + uniqueID()
    let weather = WeatherTool()
    let agent = GenerativeModelSession(model: server.model(model), tools: [weather], logHandler: .silent)
    let answer = try await agent.respond(to: photo)
    XCTAssertTrue(answer.content.hasPrefix("done: Sunny"), answer.content)
    let requests = try await server.allRequests(model)
    XCTAssertEqual(requests.count, 2, "the call round and the answer round")
    for request in requests {
      let body = try XCTUnwrap(request["body"] as? [String: Any])
      let first = try XCTUnwrap((body["contents"] as? [[String: Any]])?.first?["parts"] as? [[String: Any]])
      assertTextThenImage(first)
    }
    XCTAssertEqual(agent.transcript.entries.first?.content.parts, photo.parts)
  }

  func testAttachmentsAlone_andFileURIs_reachTheServer() async throws {
    let model = "echo~" + uniqueID()
    let session = session(model)
    let uri = "https://generativelanguage.googleapis.com/v1beta/files/abc-123"
    let answer = try await session.respond(
      to: Prompt(attachments: [
        .file(uri: uri, mimeType: "video/mp4"), .data(Data([1, 2, 3, 4]), mimeType: "audio/wav"),
      ]))
    XCTAssertEqual(answer.content, "echo: [video/mp4 at \(uri)][audio/wav, 4 bytes]")
    let parts = try await lastParts(model)
    XCTAssertEqual(parts.count, 2, "no text part: the prompt has no text")
    XCTAssertEqual(parts.first?["fileData"] as? [String: String], ["fileUri": uri, "mimeType": "video/mp4"])
    XCTAssertEqual((parts.last?["inlineData"] as? [String: Any])?["data"] as? String, "AQIDBA==")
  }

  func testTheServerChecksMediaParts_asGoogleDoes() async throws {
    // A transcript built by hand skips the session's checks: the server's own refuse what Google would.
    let model = "echo~" + uniqueID()
    let bad = Part(inlineData: Part.Blob(mimeType: "", data: png))
    let request = ModelRequest(transcript: Transcript(entries: [.init(role: .user, content: Content(parts: [bad]))]))
    let error = await captureError { try await self.server.model(model).respond(to: request) }
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 400)
  }

  func testCountTokens_countsThePromptWithItsImage() async throws {
    let model = "echo~" + uniqueID()
    let cloud = server.model(model)
    // The server counts words, and 258 for each media part, as Gemini does for a small image.
    let tokens = try await cloud.countTokens(Prompt("two words", attachments: [.image(png, mimeType: "image/png")]))
    XCTAssertEqual(tokens, 260)
    let last = try await server.lastRequest(model)
    let body = try XCTUnwrap(last["body"] as? [String: Any])
    let parts = try XCTUnwrap((body["contents"] as? [[String: Any]])?.first?["parts"] as? [[String: Any]])
    XCTAssertEqual((parts.last?["inlineData"] as? [String: Any])?["mimeType"] as? String, "image/png")
    let invalid = await captureError { try await cloud.countTokens(Prompt(attachments: [.image(png, mimeType: "x")])) }
    guard case .invalidAttachment? = invalid as? HybridInferenceError else {
      return XCTFail("\(String(describing: invalid))")
    }
    let count = try await server.requestCount(model)
    XCTAssertEqual(count, 1, "the invalid one was not sent")
  }

  func testInlineMediaOverTheLimit_isRefusedBeforeAnythingIsSent() async throws {
    let model = "echo~" + uniqueID()
    // 7 bytes are 12 base64; a limit of 11 refuses them, 12 lets them through.
    var options = RequestOptions.fastTests
    options.maximumInlineMediaBytes = 11
    let session = session(model, requestOptions: options)
    let refused: [(String, () async throws -> Void)] = [
      ("respond", { _ = try await session.respond(to: self.photo) }),
      ("stream", { for try await _ in session.streamResponse(to: self.photo) {} }),
      ("generating", { _ = try await session.respond(to: self.photo, generating: Caption.self) }),
      ("countTokens", { _ = try await self.server.model(model, requestOptions: options).countTokens(self.photo) }),
    ]
    for (name, call) in refused {
      let error = await captureError { try await call() }
      guard case .requestTooLarge(let bytes, let limit)? = error as? HybridInferenceError else {
        XCTFail("\(name): \(String(describing: error))")
        continue
      }
      XCTAssertEqual(bytes, 12, name)
      XCTAssertEqual(limit, 11, name)
    }
    let seen = try await server.requestCount(model)
    XCTAssertEqual(seen, 0, "the server saw no request")
    XCTAssertTrue(session.transcript.entries.isEmpty)
    options.maximumInlineMediaBytes = 12
    _ = try await self.session(model, requestOptions: options).respond(to: photo)
    let after = try await server.requestCount(model)
    XCTAssertEqual(after, 1)
  }
}
