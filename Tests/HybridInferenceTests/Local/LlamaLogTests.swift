import Foundation
import HybridInference
import XCTest

final class LlamaLogTests: XCTestCase {
  func testLlamaLogLines_reachTheHandler_andAreSilentByDefault() async throws {
    // A copy of the tiny model under a new path, so it is loaded (and logs) afresh.
    let copy = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID().uuidString).gguf")
    try FileManager.default.copyItem(atPath: try LocalTestModels.require(LocalTestModels.tinyPath), toPath: copy.path)
    defer { try? FileManager.default.removeItem(at: copy) }
    let logs = LogRecorder()
    LocalSystemModel.setLlamaLogHandler(logs.handler)
    defer { LocalSystemModel.setLlamaLogHandler(.silent) }
    try await LocalSystemModel(modelPath: copy.path).prepare()
    let records = logs.records
    XCTAssertFalse(records.isEmpty, "loading a model logs through the hook")
    // llama.cpp's lines, and the library's own flash-attention and offload
    // decisions (FlashAttentionTests, GPUOffloadTests).
    XCTAssertTrue(
      records.allSatisfy {
        $0.category == .llama || $0.message.hasPrefix("flash attention") || $0.message.hasPrefix("GPU offload")
      })
    XCTAssertTrue(records.contains { $0.message.contains("llama") })
  }
}
