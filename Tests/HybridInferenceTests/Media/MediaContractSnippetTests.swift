// swift-format-ignore-file
// (The third contract snippet's media lines below are kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The third contract snippet's lines on prompts with media, through `import
/// HybridInference` alone: they compile as written and run against the
/// loopback Gemini server. The snippet's `let photo = Data()` stands for JPEG
/// bytes; here the photo is real bytes, and the empty placeholder itself is
/// refused, typed, before anything is sent.
final class MediaContractSnippetTests: CloudTestCase {
  func testMediaLinesCompileAndRun() async throws {
    let model = "echo"
    let session = GenerativeModelSession(model: server.model(model), logHandler: .silent)
    let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10])
    let seen = try await mediaSnippet(session, photo: jpeg)
    XCTAssertEqual(seen, "echo: What is in this picture?[image/jpeg, 6 bytes]")
    XCTAssertEqual(session.transcript.entries.count, 4)

    let empty = await captureError { try await mediaSnippet(session, photo: Data()) }
    guard case .invalidAttachment? = empty as? HybridInferenceError else {
      return XCTFail("\(String(describing: empty))")
    }
  }
}

private func mediaSnippet(_ session: GenerativeModelSession, photo: Data) async throws -> String {
  // ---- the third contract snippet, verbatim (but `let photo = Data()`, the parameter here) ----
  let seen = try await session.respond(
    to: Prompt("What is in this picture?", attachments: [.image(photo, mimeType: "image/jpeg")]))
  for try await snapshot in session.streamResponse(to: Prompt("Describe it.", attachments: [.image(photo, mimeType: "image/jpeg")])) {
    _ = snapshot.content
  }
  // ---- end ----
  return seen.content
}
