import XCTest

@testable import HybridInferenceLlama

/// /proc files are read whole (up to a bound), not only their first page.
#if os(Linux)
  final class KernelFileTests: XCTestCase {
    /// The prompt cache's key names the llama.cpp library mapped into this
    /// process; with only /proc/self/maps' first 4 KiB read, a process with
    /// as many mappings as a test runner's read "unknown".
    func testPromptCacheBuildKey_namesTheMappedLibrary() {
      XCTAssertFalse(PromptCacheKey.build.hasSuffix("| unknown"), PromptCacheKey.build)
    }

    func testProcFile_isReadPastItsFirstPage() throws {
      let maps = try XCTUnwrap(KernelFile.read("/proc/self/maps"))
      XCTAssertGreaterThan(maps.utf8.count, 16 << 10, "a test runner maps more than 16 KiB of lines")
      XCTAssertTrue(maps.hasSuffix("\n"))
    }

    func testLongFile_isCutAtALineBoundary() throws {
      let cut = try XCTUnwrap(KernelFile.read("/proc/self/maps", limit: 1000))
      XCTAssertLessThanOrEqual(cut.utf8.count, 1000)
      XCTAssertTrue(cut.hasSuffix("\n"))
      let whole = try XCTUnwrap(KernelFile.read("/proc/self/maps"))
      XCTAssertEqual(whole.split(separator: "\n").first, cut.split(separator: "\n").first)
    }

    func testMissingFile_isNil() {
      XCTAssertNil(KernelFile.read("/proc/self/no-such-file"))
      XCTAssertNil(KernelFile.read("/proc"), "a directory is not text")
    }
  }
#endif
