// swift-format-ignore-file
// (The DESIGN.md contract snippet below is kept byte for byte as written there.)

import Foundation
import HybridInference
import TestPrerequisites
import XCTest

/// DESIGN.md §1: the contract snippet, unchanged, compiles against the library.
/// It runs wherever the default model is provisioned (`make test` does that):
/// prefer-on-device answers on the device, so no key is needed.
final class ContractSnippetTests: XCTestCase {
  func testDesignSnippetCompilesAndRuns() async throws {
    guard LocalSystemModel.default.isAvailable else {
      throw Prerequisite.missing("the default model (run make test, which provisions it); the snippet compiled")
    }
    // The snippet prints every snapshot of an unbounded story (up to the
    // 4,096-token context): megabytes of text that would bury the test log.
    fflush(nil)
    let savedOutput = dup(STDOUT_FILENO)
    let null = open("/dev/null", O_WRONLY)
    dup2(null, STDOUT_FILENO)
    defer {
      fflush(nil)
      dup2(savedOutput, STDOUT_FILENO)
      close(savedOutput)
      close(null)
    }
    try await contractSnippet()
  }
}

private func contractSnippet() async throws {
  // ---- DESIGN.md §1, verbatim ----
  // Models
  let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite")   // key from GEMINI_API_KEY or GOOGLE_API_KEY
  let local = LocalSystemModel.default                          // the default on-device model (a GGUF file)

  // Inference modes
  let preferOnDevice = GenerativeModelSession(model: .hybridModel(primary: local, secondary: cloud))
  let preferCloud    = GenerativeModelSession(model: .hybridModel(primary: cloud, secondary: local))
  let onlyOnDevice   = GenerativeModelSession(model: local)
  let onlyCloud      = GenerativeModelSession(model: cloud)

  // Availability of the on-device model
  if LocalSystemModel.default.isAvailable { /* ready */ }
  switch LocalSystemModel.default.availability {
  case .available: break
  case .unavailable(.deviceNotEligible): break         // llama.cpp cannot run here (library missing, CPU or memory too small)
  case .unavailable(.localInferenceNotEnabled): break  // switched off by the app or the user (HYBRID_INFERENCE_DISABLE_LOCAL=1)
  case .unavailable(.modelNotReady): break             // the model file is missing, incomplete or still being fetched
  case .unavailable(let reason): _ = reason            // the enum may grow
  }

  // One request, with per-model options
  let response = try await preferOnDevice.respond(
    to: "Why is the sky blue?",
    options: .hybrid(
      gemini: GenerationConfig(temperature: 0.8, topP: 0.9,
                               thinkingConfig: ThinkingConfig(thinkingLevel: .high)),
      foundationModels: GenerationOptions(sampling: .random(probabilityThreshold: 0.9),
                                          temperature: 0.8)))
  print("You used: \(response.rawResponse.modelVersion)")  // "gemini-3.1-flash-lite" or LocalSystemModel.modelVersion
  print(response.content)

  // Streaming: snapshots as text arrives
  for try await snapshot in preferOnDevice.streamResponse(to: "Tell me a story") {
    print(snapshot.content)            // the text so far
  }
  // ---- end of the snippet ----
  _ = (preferCloud, onlyOnDevice, onlyCloud)
}
