import Foundation
import GeminiServerProcess
import TestPrerequisites
import XCTest

@testable import HybridInferenceLlama

/// huggingface_hub, the reference client of the hub and of its cache layout,
/// through Tests/HubServer/hf_reference.py and the set-up's venv
/// (scripts/setup-python.sh pins huggingface_hub there).
enum HFReference {
  /// The venv's python, once it has imported huggingface_hub; what is missing, else.
  static let python: Result<String, HubTestUnavailable> = {
    let environment = ProcessInfo.processInfo.environment
    let python =
      environment["HYBRID_TEST_PYTHON"]
      ?? DefaultModelLocation.cacheDirectory(environment: environment) + "/venv/bin/python"
    let missing = "huggingface_hub in the Python venv at \(python) (`make test` provisions it)"
    guard FileManager.default.isExecutableFile(atPath: python),
      let run = try? HubTestServer.run(python, ["-c", "import huggingface_hub"], environment: environment),
      run.status == 0
    else { return .failure(HubTestUnavailable(missing)) }
    return .success(python)
  }()

  /// The venv's python; a missing prerequisite (a failure under CI) when absent.
  static func require(file: StaticString = #filePath, line: UInt = #line) throws -> String {
    switch python {
    case .success(let python): return python
    case .failure(let unavailable): throw Prerequisite.missing(unavailable.message, file: file, line: line)
    }
  }

  /// Runs `hf_reference.py <command>` against the hub at `endpoint` with the
  /// cache `cache`, sending `token` when given; nothing else of the user's
  /// Hugging Face set-up (HF_* variables, a stored token) reaches it.
  static func run(
    _ command: String, repository: String, file: String = "model.gguf", revision: String = "main",
    endpoint: URL, cache: URL, token: String? = nil
  ) throws -> HubTestServer.Run {
    let python = try require()
    var environment = ProcessInfo.processInfo.environment.filter {
      !$0.key.hasPrefix("HF_") && !$0.key.hasPrefix("HUGGINGFACE")
    }
    environment["HF_ENDPOINT"] = endpoint.absoluteString
    environment["HF_HUB_CACHE"] = cache.path
    environment["HF_HOME"] = cache.deletingLastPathComponent().appendingPathComponent("hf-home").path
    environment["HF_TOKEN"] = token
    let script = LoopbackScriptProcess.repositoryRoot.appendingPathComponent("Tests/HubServer/hf_reference.py")
    return try HubTestServer.run(
      python, [script.path, command, "--repo", repository, "--file", file, "--revision", revision],
      environment: environment)
  }
}
