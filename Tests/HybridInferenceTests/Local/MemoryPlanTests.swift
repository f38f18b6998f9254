import XCTest

@testable import HybridInferenceLlama

/// `ModelMemory` decided from injected facts: kernels, limits, model sizes
/// and builds this machine does not have.
final class MemoryPlanTests: XCTestCase {
  private let gib = 1 << 30

  private func plan(
    _ memory: ModelMemory, file: Int, limit: Int?, collapse: Bool = true, gpu: Bool = false
  ) -> MemoryPlan {
    MemoryPlan.decide(
      memory, facts: .init(fileSize: file, memoryLimit: limit, collapseWorks: collapse, offloadsToGPU: gpu))
  }

  func testAutomatic_readsASmallModelIn() {
    XCTAssertTrue(plan(.automatic, file: 100 << 20, limit: 24 * gib).weightsInMemory)
  }

  func testAutomatic_mapsAModelOverAQuarterOfMemory() {
    let limit = 8 * gib
    XCTAssertTrue(plan(.automatic, file: limit / 4, limit: limit).weightsInMemory, "a quarter exactly is read in")
    let large = plan(.automatic, file: limit / 4 + 1, limit: limit)
    XCTAssertFalse(large.weightsInMemory)
    XCTAssertTrue(large.reason.contains("quarter"), large.reason)
  }

  func testAutomatic_withMemoryUnknown_mapsTheWeights() {
    XCTAssertFalse(plan(.automatic, file: 1 << 20, limit: nil).weightsInMemory)
  }

  func testAKernelThatCannotCollapse_orAGPUBuild_leavesLlamaCppsDefault_whateverWasAsked() {
    for memory in [ModelMemory.automatic, .hugePages, .mapped] {
      XCTAssertFalse(plan(memory, file: 1 << 20, limit: 24 * gib, collapse: false).weightsInMemory, "\(memory)")
      XCTAssertFalse(plan(memory, file: 1 << 20, limit: 24 * gib, gpu: true).weightsInMemory, "\(memory)")
    }
  }

  func testHugePages_isTakenAtItsWord_evenForALargeModelOrUnknownMemory() {
    XCTAssertTrue(plan(.hugePages, file: 20 * gib, limit: 24 * gib).weightsInMemory)
    XCTAssertTrue(plan(.hugePages, file: 1 << 20, limit: nil).weightsInMemory)
  }

  func testMapped_asksNothingOfTheKernel() {
    XCTAssertFalse(plan(.mapped, file: 1 << 20, limit: 24 * gib).weightsInMemory)
  }

  func testACgroupLimit_isReadAsBytes_andMaxAsNone() {
    XCTAssertEqual(CGroupMemory.parseLimit("1073741824\n"), gib)
    XCTAssertNil(CGroupMemory.parseLimit("max\n"))
    for hostile in ["", "0", "-5", "12abc", "99999999999999999999999", " \n"] {
      XCTAssertNil(CGroupMemory.parseLimit(hostile), hostile)
    }
  }

  /// The lowest `memory.max` from the process's cgroup up to the root.
  func testTheCgroupLimit_isTheLowestFromTheLeafToTheRoot() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let leaf = root.appendingPathComponent("kubepods/pod1/app")
    try FileManager.default.createDirectory(at: leaf, withIntermediateDirectories: true)
    try "max\n".write(to: leaf.appendingPathComponent("memory.max"), atomically: true, encoding: .utf8)
    try "2147483648\n".write(
      to: root.appendingPathComponent("kubepods/pod1/memory.max"), atomically: true, encoding: .utf8)
    try "8589934592\n".write(
      to: root.appendingPathComponent("kubepods/memory.max"), atomically: true, encoding: .utf8)
    let limit = CGroupMemory.lowestLimit(root: root.path, membership: "0::/kubepods/pod1/app\n")
    XCTAssertEqual(limit, 2 * gib, "the pod's limit binds the unlimited leaf")
    XCTAssertNil(CGroupMemory.lowestLimit(root: root.path, membership: "0::/elsewhere\n"))
    XCTAssertNil(
      CGroupMemory.lowestLimit(root: root.path, membership: "0::/kubepods/../../etc\n"),
      "a climbing path is not followed")
    XCTAssertNil(CGroupMemory.lowestLimit(root: root.path, membership: nil))
  }

  func testACollapseThatComputedNothing_reportsNothing_andStaysOpen() {
    XCTAssertNil(HugePageMove(weights: WeightPages()).finish(), "no node visited")
    XCTAssertNil(HugePageMove(weights: nil).finish())
  }
}
