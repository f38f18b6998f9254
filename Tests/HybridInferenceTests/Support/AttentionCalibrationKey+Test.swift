import CLlama
import XCTest

@testable import HybridInferenceLlama

extension AttentionCalibrationStore.Key {
  /// The key of a small made-up model at `/name` (a shape no real context
  /// needs, a fingerprint of no file), for tests of where decisions are
  /// stored and read back: distinct names never share a decision.
  static func test(_ name: String) throws -> Self {
    let shape = try XCTUnwrap(
      AttentionCalibrationGraph.Shape(layers: 2, heads: 4, kvHeads: 2, headSize: 16, kvType: GGML_TYPE_F16))
    let model = try ModelFingerprint(path: "/\(name)", identity: XCTUnwrap(FileIdentity.of(path: "/")), descriptor: -1)
    return Self(model: model, shape: shape, threads: 2, depths: [0, 256])
  }
}
