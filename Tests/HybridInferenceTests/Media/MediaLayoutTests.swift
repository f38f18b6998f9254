import XCTest

@testable import HybridInferenceLlama

/// What a later turn compares to keep an image's cells, and the prompt
/// cache key of a state holding images.
final class MediaLayoutTests: XCTestCase {
  private func image(_ id: String?, start: Int = 5, count: Int = 4) -> MediaLayout.Image {
    MediaLayout.Image(chunk: 1, start: start, count: count, id: id)
  }

  func testAnImageIsTheSame_onlyByItsIdInTheSamePlace() {
    XCTAssertTrue(image("a").isSame(as: image("a")))
    XCTAssertFalse(image("a").isSame(as: image("b")))
    XCTAssertFalse(image("a").isSame(as: image("a", start: 6)))
    XCTAssertFalse(image("a").isSame(as: image("a", count: 5)))
    XCTAssertFalse(image(nil).isSame(as: image(nil)), "an image without an id is never kept")
  }

  func testTheChunkHoldingAPosition_andImagesAfterIt() {
    let layout = MediaLayout(
      tokens: [1, 2, 3, -1, -1, 7, 8], images: [MediaLayout.Image(chunk: 1, start: 3, count: 2, id: "a")],
      chunkStarts: [0, 3, 5])
    XCTAssertEqual(layout.chunk(holding: 0), 0)
    XCTAssertEqual(layout.chunk(holding: 4), 1)
    XCTAssertEqual(layout.chunk(holding: 6), 2)
    XCTAssertTrue(layout.hasImages(from: 1))
    XCTAssertFalse(layout.hasImages(from: 2))
  }

  func testAStateKey_differsByTheImagesIds() throws {
    let key: UInt64 = 0x1234
    XCTAssertEqual(PromptCacheKey.hash(key, images: []), key)
    let one = try XCTUnwrap(PromptCacheKey.hash(key, images: [image("a")]))
    let other = try XCTUnwrap(PromptCacheKey.hash(key, images: [image("b")]))
    XCTAssertNotEqual(one, key)
    XCTAssertNotEqual(one, other)
    XCTAssertEqual(PromptCacheKey.hash(key, images: [image("a")]), one)
    XCTAssertNil(PromptCacheKey.hash(key, images: [image(nil)]))
  }
}
