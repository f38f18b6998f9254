import CLlama
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

  /// The tiny random-weight model that reads images, and its projector
  /// (an `mmproj` of clip type "mlp"), from scripts/make-tiny-vision-model.py.
  static var tinyVisionPath: String { cache + "/models/tiny-random-llava.gguf" }
  static var tinyProjectorPath: String { cache + "/models/tiny-random-llava-mmproj.gguf" }

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

extension LocalTestModels {
  /// Runs `body` on the compute lane with a fresh 256-cell llama.cpp context
  /// of the tiny model; what it returns is the test's failure (nil: passed).
  static func onTinyContext(_ body: @escaping @Sendable (OpaquePointer) -> String?) async throws -> String? {
    let loaded = try await tiny(contextSize: 512).loadedModel(progress: nil)
    return try await ComputeLane.run(threads: 2) { () -> String? in
      var params = llama_context_default_params()
      (params.n_ctx, params.n_batch, params.n_ubatch, params.n_seq_max) = (256, 64, 64, 1)
      guard let context = llama_init_from_model(loaded.pointer, params) else { return "no context" }
      defer { llama_free(context) }
      return body(context)
    }
  }
}
