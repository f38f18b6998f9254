import CLlama
import Foundation
import XCTest

@testable import HybridInferenceLlama

/// Shapes a crafted GGUF header can give that `AttentionCalibrationGraph.Shape`
/// accepts, at their odd edges, measured for real in a child process: ggml
/// asserts (aborting the host) on a graph it cannot build, so each must end
/// in timings or a `Failure`, never a crash.
final class FlashAttentionHostileShapeTests: XCTestCase {
  func testOddButAcceptedShapes_measureOrFail_withoutCrashing() async throws {
    try await ChildProcess.assertPasses(self) {
      let shapes: [(layers: Int, heads: Int, kvHeads: Int, head: Int)] = [
        (1, 1, 1, 1), (2, 3, 1, 3), (1, 7, 7, 1000), (1, 4096, 1, 4), (1, 64, 2, 1024), (3, 4096, 4096, 1),
      ]
      for (layers, heads, kvHeads, head) in shapes {
        let shape = try XCTUnwrap(
          AttentionCalibrationGraph.Shape(
            layers: layers, heads: heads, kvHeads: kvHeads, headSize: head, kvType: GGML_TYPE_F16),
          "\(layers) \(heads) \(kvHeads) \(head)")
        let result = try await ComputeLane.run(threads: 2) {
          AttentionCalibrationGraph.measure(shape: shape, depths: [0, 511], threads: 2)
        }
        if case .success(let timings) = result {
          XCTAssertEqual(timings.cells.count, 2, "\(shape)")
          XCTAssertTrue(timings.cells.allSatisfy { !$0.on.isEmpty && !$0.off.isEmpty }, "\(shape)")
        }
      }
    }
  }
}
