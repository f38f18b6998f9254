import XCTest

@testable import HybridInferenceLlama

/// `ModelMemory` decided from injected facts: kernels, limits and model sizes
/// this machine does not have.
final class MemoryPlanTests: XCTestCase {
  private let gib = 1 << 30

  private func plan(_ memory: ModelMemory, file: Int, limit: Int?, collapse: Bool = true) -> MemoryPlan {
    MemoryPlan.decide(memory, facts: .init(fileSize: file, memoryLimit: limit, collapseWorks: collapse))
  }

  func testAutomatic_readsASmallModelIn_andMovesEverything() {
    let small = plan(.automatic, file: 100 << 20, limit: 24 * gib)
    XCTAssertTrue(small.weightsInMemory)
    XCTAssertEqual(small.collapse, .weightsAndCache)
  }

  func testAutomatic_mapsAModelOverAQuarterOfMemory_butStillMovesTheCache() {
    let limit = 8 * gib
    XCTAssertTrue(plan(.automatic, file: limit / 4, limit: limit).weightsInMemory, "a quarter exactly is read in")
    let large = plan(.automatic, file: limit / 4 + 1, limit: limit)
    XCTAssertFalse(large.weightsInMemory)
    XCTAssertEqual(large.collapse, .cache)
    XCTAssertTrue(large.reason.contains("quarter"), large.reason)
  }

  func testAutomatic_withMemoryUnknown_mapsTheWeights() {
    let unknown = plan(.automatic, file: 1 << 20, limit: nil)
    XCTAssertFalse(unknown.weightsInMemory)
    XCTAssertEqual(unknown.collapse, .cache)
  }

  func testAKernelThatCannotCollapse_leavesLlamaCppsDefault_whateverWasAsked() {
    for memory in [ModelMemory.automatic, .hugePages, .mapped] {
      let refused = plan(memory, file: 1 << 20, limit: 24 * gib, collapse: false)
      XCTAssertFalse(refused.weightsInMemory, "\(memory)")
      XCTAssertEqual(refused.collapse, HugePageCollapse.Scope.none, "\(memory)")
    }
  }

  func testHugePages_isTakenAtItsWord_evenForALargeModel() {
    let forced = plan(.hugePages, file: 20 * gib, limit: 24 * gib)
    XCTAssertTrue(forced.weightsInMemory)
    XCTAssertEqual(forced.collapse, .weightsAndCache)
  }

  func testMapped_asksNothingOfTheKernel() {
    let mapped = plan(.mapped, file: 1 << 20, limit: 24 * gib)
    XCTAssertFalse(mapped.weightsInMemory)
    XCTAssertEqual(mapped.collapse, HugePageCollapse.Scope.none)
  }

  func testACgroupLimit_isReadAsBytes_andMaxAsNone() {
    XCTAssertEqual(HugePages.parseLimit("1073741824\n"), gib)
    XCTAssertNil(HugePages.parseLimit("max\n"))
    for hostile in ["", "0", "-5", "12abc", "99999999999999999999999", " \n"] {
      XCTAssertNil(HugePages.parseLimit(hostile), hostile)
    }
  }

  func testTheMemoryLimit_isAtMostThePhysicalMemory() throws {
    let limit = try XCTUnwrap(HugePages.memoryLimit())
    XCTAssertGreaterThan(limit, 0)
    XCTAssertLessThanOrEqual(limit, Int(clamping: ProcessInfo.processInfo.physicalMemory))
  }
}
