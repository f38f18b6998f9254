import Foundation
import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// What happens between a model file's check and its load.
final class ModelLoadRaceTests: XCTestCase {
  /// Before: llama.cpp loaded whatever the path named by then, checked or not.
  func testAFileRenamedOverThePathAfterItsCheck_isNotLoaded() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hybrid-swap-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("model.gguf").path
    let tiny = try LocalTestModels.require(LocalTestModels.tinyPath)
    try FileManager.default.copyItem(atPath: tiny, toPath: path)
    let checked = try GGUFFile.read(path: path)
    // Another file, the same bytes, size and modification time, renamed over the path.
    let other = directory.appendingPathComponent("other.gguf").path
    try FileManager.default.copyItem(atPath: tiny, toPath: other)
    let modified = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.modificationDate])
    try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: other)
    XCTAssertEqual(rename(other, path), 0)
    let store = LlamaModelStore()
    do {
      _ = try await store.model(at: path, file: checked, progress: nil)
      XCTFail("the swapped file must not be loaded")
    } catch HybridInferenceError.invalidModelFile(let refused, let reason) {
      XCTAssertEqual(refused, path)
      XCTAssertTrue(reason.contains("changed after it was checked"), reason)
    }
    // Checked anew, it loads.
    _ = try await store.model(at: path, file: try GGUFFile.read(path: path), progress: nil)
  }

  /// Before: every waiter of a failed load cleared the entry whatever it
  /// held by then, so a waiter resuming after a newer load began cleared
  /// that one too, and the next caller started a third load beside it.
  func testALateWaiterOfAFailedLoad_leavesTheNewerLoadInPlace() async throws {
    let loads = Atomic<Int>(0)
    let store = LlamaModelStore { _, _, _, _ in
      loads.add(1, ordering: .relaxed)
      throw HybridInferenceError.generationFailed("scripted load failure")
    }
    let path = try LocalTestModels.require(LocalTestModels.tinyPath)
    let file = try GGUFFile.read(path: path)
    let key = LlamaModelStore.Key(path: path, identity: file.identity)
    let first = store.task(for: key, path: path, file: file, progress: nil)
    let failure = await first.result
    store.settle(key, first, failure)  // the first waiter
    let newer = store.task(for: key, path: path, file: file, progress: nil)  // a retry starts a second load
    store.settle(key, first, failure)  // another waiter of the first load, resuming late
    let next = store.task(for: key, path: path, file: file, progress: nil)
    XCTAssertEqual(next, newer, "the next caller joins the load under way")
    _ = await newer.result
    XCTAssertEqual(loads.load(ordering: .relaxed), 2)
  }
}
