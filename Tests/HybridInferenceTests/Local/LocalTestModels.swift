import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The model files the local tests use; `make test` provisions both.
enum LocalTestModels {
  private static let environment = ProcessInfo.processInfo.environment

  private static var cache: String { DefaultModelLocation.cacheDirectory(environment: environment) }

  /// The tiny random-weight GGUF that scripts/make-tiny-model.py generates.
  static var tinyPath: String {
    environment["HYBRID_TEST_TINY_MODEL"] ?? cache + "/models/tiny-random-llama.gguf"
  }

  /// SmolLM2-135M-Instruct, from scripts/fetch-default-model.sh.
  static var defaultPath: String {
    DefaultModelLocation.path(environment: environment)
  }

  /// Fails (rather than skips) when a model is missing: `make test` provides it.
  static func require(_ path: String) throws -> String {
    guard FileManager.default.fileExists(atPath: path) else {
      XCTFail("missing \(path): run `make test`, which provisions the test models")
      throw XCTSkip("model missing")
    }
    return path
  }

  static func tiny(contextSize: Int? = 512) throws -> LocalSystemModel {
    LocalSystemModel(modelPath: try require(tinyPath), contextSize: contextSize, threads: 2)
  }

  static func smol(contextSize: Int? = 2048, flashAttention: FlashAttention = .automatic) throws -> LocalSystemModel {
    LocalSystemModel(modelPath: try require(defaultPath), contextSize: contextSize, flashAttention: flashAttention)
  }
}
