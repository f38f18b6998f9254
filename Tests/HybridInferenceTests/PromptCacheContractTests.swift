// swift-format-ignore-file
// (The DESIGN.md §8 lines below are kept byte for byte as written there.)

import Foundation
import HybridInference
import XCTest

/// DESIGN.md §8: the prompt cache's lines compile against the library, as
/// written (the rest of §8 becomes this test once the issues that build it land).
final class PromptCacheContractTests: XCTestCase {
  func testDesignSection8PromptCacheLinesCompile() throws {
    // ---- DESIGN.md §8, verbatim ----
    let cache = PromptCache.directory(URL(fileURLWithPath: "/var/cache/app/kv"), maximumBytes: 2 << 30)
    let cached = LocalSystemModel(modelPath: "/models/smollm2.gguf", promptCache: cache)
    print(cache.currentDiskUsage)        // bytes on disk; cache.removeAll() empties it
    // ---- end ----
    XCTAssertEqual(cache.currentDiskUsage, 0, "reading the usage makes nothing")
    XCTAssertFalse(FileManager.default.fileExists(atPath: "/var/cache/app/kv"))
    XCTAssertTrue(cached.promptCache === cache)
  }
}
