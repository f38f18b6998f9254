import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// A session's next turn keeps its sequence's cells across earlier images:
/// the same image in the same place is not encoded again, the answer is
/// the one a fresh session gives the whole conversation, and another image
/// in that place is encoded.
final class DeviceImageReuseTests: XCTestCase {
  private static let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))

  /// A 40x30 checkerboard of two colours.
  private static let checks = TestPNG.encode(width: 40, height: 30) { x, y in
    (x + y) % 2 == 0 ? (255, 40, 0) : (0, UInt8(y * 8), 200)
  }
  /// A 20x20 vertical gradient.
  private static let gradient = TestPNG.encode(width: 20, height: 20) { _, y in (UInt8(y * 12), 90, 30) }

  private func seeing() throws -> LocalSystemModel {
    LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyVisionPath),
      projectorPath: try LocalTestModels.require(LocalTestModels.tinyProjectorPath), contextSize: 512, threads: 2)
  }

  private func encodes(_ local: LocalSystemModel) async throws -> Int {
    let projector = try await local.loadedProjector(for: try await local.loadedModel(progress: nil))
    return projector.encodedImages.load(ordering: .relaxed)
  }

  private static func asking(_ text: String, _ png: Data) -> Prompt {
    Prompt(text, attachments: [.image(png, mimeType: "image/png")])
  }

  func testTheNextTurnKeepsTheImage_encodesNone_andAnswersAsAFreshSession() async throws {
    let local = try seeing()
    let session = GenerativeModelSession(model: local, logHandler: .silent)
    let first = try await session.respond(to: Self.asking("What is in the picture?", Self.checks), options: Self.greedy)
    let firstPrompt = try XCTUnwrap(first.rawResponse.usageMetadata?.promptTokenCount)
    let encoded = try await encodes(local)
    XCTAssertGreaterThanOrEqual(encoded, 1)

    let next = try await session.respond(to: "And now?", options: Self.greedy)
    let afterNext = try await encodes(local)
    XCTAssertEqual(afterNext, encoded, "the next turn encodes no image")
    let usage = try XCTUnwrap(next.rawResponse.usageMetadata)
    let reused = try XCTUnwrap(usage.cachedContentTokenCount)
    XCTAssertGreaterThanOrEqual(reused, firstPrompt, "the first turn's prompt, its image included, is kept")
    XCTAssertLessThan(reused, try XCTUnwrap(usage.promptTokenCount))

    // A fresh session given the whole conversation encodes the image and answers the same.
    let asked = Transcript(entries: Array(session.transcript.entries.dropLast()))
    let fresh = try await local.respond(to: ModelRequest(transcript: asked, options: Self.greedy))
    let afterFresh = try await encodes(local)
    XCTAssertEqual(afterFresh, afterNext + 1)
    XCTAssertEqual(fresh.usageMetadata?.cachedContentTokenCount ?? 0, 0)
    XCTAssertEqual(fresh.usageMetadata?.promptTokenCount, usage.promptTokenCount)
    XCTAssertEqual(fresh.text, next.content)
  }

  func testAnotherImageInThePlaceOfTheFirst_isEncoded_andKeepsOnlyTheTextBeforeIt() async throws {
    let local = try seeing()
    let storage = SessionStorage()
    let opening = Transcript(entries: [.prompt(Self.asking("What is in the picture?", Self.checks))])
    let first = try await local.respond(
      to: ModelRequest(transcript: opening, options: Self.greedy, sessionStorage: storage))
    let firstPrompt = try XCTUnwrap(first.usageMetadata?.promptTokenCount)

    // The same conversation with the gradient in the checkerboard's place:
    // every token the same, only the image differs.
    let conversation = Transcript(entries: [
      .prompt(Self.asking("What is in the picture?", Self.gradient)),
      .response(Content(text: first.text), modelVersion: LocalSystemModel.modelVersion), .prompt("And now?"),
    ])
    let before = try await encodes(local)
    let swapped = try await local.respond(
      to: ModelRequest(transcript: conversation, options: Self.greedy, sessionStorage: storage))
    let after = try await encodes(local)
    XCTAssertEqual(after, before + 1, "the other image is encoded")
    // The text before the image is kept (the session's own sequence), and
    // nothing from the image on: fewer than the first prompt's positions
    // less the image's 4 embeddings.
    let kept = swapped.usageMetadata?.cachedContentTokenCount ?? 0
    XCTAssertGreaterThan(kept, 0)
    XCTAssertLessThanOrEqual(kept, firstPrompt - 4)

    let fresh = try await local.respond(to: ModelRequest(transcript: conversation, options: Self.greedy))
    XCTAssertEqual(fresh.text, swapped.text)
  }

  func testANewImageInTheNextTurn_isTheOnlyOneEncoded_andAnswersAsAFreshSession() async throws {
    let local = try seeing()
    let session = GenerativeModelSession(model: local, logHandler: .silent)
    let first = try await session.respond(to: Self.asking("What is in the picture?", Self.checks), options: Self.greedy)
    let firstPrompt = try XCTUnwrap(first.rawResponse.usageMetadata?.promptTokenCount)
    let before = try await encodes(local)
    let next = try await session.respond(to: Self.asking("And in this one?", Self.gradient), options: Self.greedy)
    let after = try await encodes(local)
    XCTAssertEqual(after, before + 1, "only the new image is encoded")
    XCTAssertGreaterThanOrEqual(next.rawResponse.usageMetadata?.cachedContentTokenCount ?? 0, firstPrompt)

    let asked = Transcript(entries: Array(session.transcript.entries.dropLast()))
    let fresh = try await local.respond(to: ModelRequest(transcript: asked, options: Self.greedy))
    let afterFresh = try await encodes(local)
    XCTAssertEqual(afterFresh, after + 2, "a fresh request encodes both")
    XCTAssertEqual(fresh.text, next.content)
  }
}
