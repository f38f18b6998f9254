import Foundation
import XCTest

@testable import HybridInference

/// Input that once trapped the process (an `Int(...)` of `1e300`, an
/// `Int32(...)` of `.max`, a sum that overflowed): each case runs in a child
/// process (`ChildProcess`), so a regression fails an assertion here instead
/// of ending the test run. Before the fixes, each child died of SIGILL
/// (Swift's overflow trap) at its first case.
final class HostileInputTests: XCTestCase {
  func testCraftedFilesWithOverflowingNumbers_areRefused_inAChild() throws {
    let crafted = try CraftedModels.shared.get()
    try ChildProcess.assertPasses(
      "HostileInputScenarios/testCraftedFilesWithOverflowingNumbers",
      environment: ["HYBRID_CRAFTED_DIR": crafted.directory])
  }

}

/// The cases of `HostileInputTests`, run only in its child processes.
final class HostileInputScenarios: XCTestCase {
  override func setUpWithError() throws {
    try XCTSkipUnless(ChildProcess.isChild, "run by HostileInputTests in a child process")
  }

  /// Crafted files (scripts/make-crafted-models.py) whose numbers overflowed the check's own arithmetic.
  static let overflowingKinds = [
    "tensor-offset-near-int-max": "tensor token_embd.weight ends past byte 9223372036854775807",
    "attention-widths-overflow": "overflow",
  ]

  func testCraftedFilesWithOverflowingNumbers() async throws {
    let directory = try XCTUnwrap(ProcessInfo.processInfo.environment["HYBRID_CRAFTED_DIR"])
    for (kind, expected) in Self.overflowingKinds.sorted(by: { $0.key < $1.key }) {
      let model = LocalSystemModel(modelPath: directory + "/\(kind).gguf")
      XCTAssertEqual(model.availability, .unavailable(.modelNotReady), kind)
      do {
        try await model.prepare()
        XCTFail("\(kind) must be refused")
      } catch HybridInferenceError.invalidModelFile(_, let reason) {
        XCTAssertTrue(reason.contains(expected), "\(kind): reason was: \(reason)")
      }
    }
  }
}
