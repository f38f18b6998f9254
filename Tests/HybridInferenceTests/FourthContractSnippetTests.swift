// swift-format-ignore-file
// (The download part of the fourth contract snippet below is kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The download part of the fourth contract snippet, byte for byte: it compiles as
/// written and runs against the loopback hub (`HF_ENDPOINT`, `HF_HUB_CACHE` pointed at
/// it and at a temporary cache for the test), which serves the tiny test model under the
/// snippet's repository name. Its GPU part compiles and runs as written too. The rest of
/// the snippet (thinking, images) comes with the parts that build it.
final class FourthContractSnippetTests: XCTestCase {
  func testTheDownloadPartCompilesFetchesVerifiesAndPrepares() async throws {
    let server = try DownloadTestBed.server()
    let cache = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-hub-\(UUID().uuidString)")
    let saved = ["HF_ENDPOINT", "HF_HUB_CACHE", "HF_TOKEN"].map { ($0, ProcessInfo.processInfo.environment[$0]) }
    setenv("HF_ENDPOINT", server.hubURL.absoluteString, 1)
    setenv("HF_HUB_CACHE", cache.path, 1)
    unsetenv("HF_TOKEN")
    defer {
      for (name, value) in saved { if let value { setenv(name, value, 1) } else { unsetenv(name) } }
      try? FileManager.default.removeItem(at: cache)
    }

    let (fetched, pinned) = try await fourthSnippetDownloadPart()

    XCTAssertEqual(fetched.availability, .available)
    XCTAssertTrue(fetched.modelPath.hasPrefix(cache.path + "/models--HuggingFaceTB--SmolLM2-360M-Instruct-GGUF/snapshots/"))
    XCTAssertEqual(pinned.availability, .unavailable(.modelNotReady))
  }
}

extension FourthContractSnippetTests {
  func testTheGPUPartCompilesAndListsTheDevices() throws {
    let onGPU = fourthSnippetGPUPart()
    XCTAssertEqual(onGPU.gpu, .automatic)
    XCTAssertEqual(onGPU.availability, .unavailable(.modelNotReady), "no file at the snippet's path")
    XCTAssertTrue(LocalSystemModel.computeDevices.contains { $0.kind == .cpu })
    XCTAssertEqual([GPUOffload.none, .layers(20)].map(\.description), ["none", "layers(20)"])
  }
}

private func fourthSnippetGPUPart() -> LocalSystemModel {
  // ---- the fourth contract snippet's GPU part, verbatim ----

  // The GPU, where the llama.cpp in use has a GPU backend (Vulkan, CUDA, Metal).
  let onGPU = LocalSystemModel(modelPath: "/models/m.gguf", gpu: .automatic)   // .none, .layers(20)
  for device in LocalSystemModel.computeDevices { print(device.name, device.kind, device.memoryBytes ?? 0) }

  // ---- end of the snippet's GPU part ----
  return onGPU
}

private func fourthSnippetDownloadPart() async throws -> (LocalSystemModel, LocalSystemModel) {
  // ---- the fourth contract snippet's download part, verbatim ----

  // A model the library fetches itself. Nothing is on disk yet: availability says so, and a
  // prefer-on-device hybrid answers from the cloud meanwhile.
  let fetched = LocalSystemModel(
    source: .huggingFace(repository: "HuggingFaceTB/SmolLM2-360M-Instruct-GGUF",
                         file: "smollm2-360m-instruct-q8_0.gguf"))   // revision "main"; HF_ENDPOINT, HF_TOKEN
  let pinned = LocalSystemModel(source: .url(URL(string: "https://models.example.com/m.gguf")!,
                                             sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"))
  if case .unavailable(.modelNotReady) = fetched.availability {
    for try await progress in fetched.download() {      // resumes, verifies, then moves into place
      print(progress.completedBytes, progress.totalBytes ?? 0, progress.fractionCompleted)
    }
  }
  try await fetched.prepare()                            // load now, not on the first request
  print(ModelStore.default.directory.path)               // where `.url` downloads go

  // ---- end of the snippet's download part ----
  return (fetched, pinned)
}
