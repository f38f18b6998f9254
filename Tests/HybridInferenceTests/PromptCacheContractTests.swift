// swift-format-ignore-file
// (The third contract snippet's prompt-cache lines below are kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The prompt cache's lines of the third contract snippet compile against the
/// library, as written (ThirdContractSnippetTests compiles the whole snippet).
final class PromptCacheContractTests: XCTestCase {
  func testDesignSection8PromptCacheLinesCompile() throws {
    // ---- the third contract snippet, verbatim ----
    let cache = PromptCache.directory(URL(fileURLWithPath: "/var/cache/app/kv"), maximumBytes: 2 << 30)
    let cached = LocalSystemModel(modelPath: "/models/smollm2.gguf", promptCache: cache)
    print(cache.currentDiskUsage)        // bytes on disk; cache.removeAll() empties it
    // ---- end ----
    XCTAssertEqual(cache.currentDiskUsage, 0, "reading the usage makes nothing")
    XCTAssertFalse(FileManager.default.fileExists(atPath: "/var/cache/app/kv"))
    XCTAssertTrue(cached.promptCache === cache)
  }
}
