// swift-format-ignore-file
// (The download part of the fourth contract snippet below is kept byte for byte.)

import Foundation
import HybridInference
import XCTest

/// The download part of the fourth contract snippet, byte for byte: it compiles as
/// written and runs against the loopback hub (`HF_ENDPOINT`, `HF_HUB_CACHE` pointed at
/// it and at a temporary cache for the test), which serves the tiny test model under the
/// snippet's repository name. Its GPU and image parts compile and run as written too. The
/// rest of the snippet (thinking) comes with the part that builds it.
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

extension FourthContractSnippetTests {
  /// The image part compiles as written. Run as written, its files are not
  /// on this machine, so the hybrid answers from its cloud (the test Gemini
  /// server); the same code with the tiny vision model's files answers on
  /// device (`DeviceImageTests`).
  func testTheImagePartCompilesAndFallsBackWithoutItsFiles() async throws {
    let gemini = try GeminiTestServer()
    defer { gemini.stop() }
    let photo = TestPNG.encode(width: 8, height: 8) { x, y in (UInt8(x * 30), UInt8(y * 30), 90) }
    let described = try await fourthSnippetImagePart(photo: photo, cloud: gemini.model("echo~" + UUID().uuidString))
    XCTAssertEqual(described.rawResponse.placement, .cloud)
  }
}

private func fourthSnippetImagePart(photo: Data, cloud: CloudGeminiModel) async throws -> GenerativeModelSession.Response {
  // ---- the fourth contract snippet's image part, verbatim ----

  let seeing = LocalSystemModel(modelPath: "/models/SmolVLM-256M-Instruct-Q8_0.gguf",
                                projectorPath: "/models/mmproj-SmolVLM-256M-Instruct-Q8_0.gguf")
  let described = try await GenerativeModelSession(model: .hybridModel(primary: seeing, secondary: cloud))
    .respond(to: Prompt("What is in this picture?", attachments: [.image(photo, mimeType: "image/jpeg")]))
  print(described.rawResponse.placement)                 // .onDevice: the device read the image

  // ---- end of the snippet's image part ----
  return described
}
