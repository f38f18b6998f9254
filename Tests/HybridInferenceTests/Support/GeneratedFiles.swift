import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Files a repo script writes with the set-up's Python venv, once per test
/// process: the crafted model files (scripts/make-crafted-models.py) and the
/// hostile chat templates (scripts/make-hostile-templates.py), the tiny
/// models carrying each fixture chat template (scripts/make-template-models.py). Each script
/// takes a directory and prints the kinds it wrote, one per line.
final class GeneratedFiles: Sendable {
  struct Output: Sendable {
    var directory: String
    var kinds: [String]
  }

  static let craftedModels = GeneratedFiles(script: "make-crafted-models.py", prefix: "hybrid-crafted")
  static let hostileTemplates = GeneratedFiles(script: "make-hostile-templates.py", prefix: "hybrid-hostile")
  static let templateModels = GeneratedFiles(script: "make-template-models.py", prefix: "hybrid-template-models")

  let output: Result<Output, GeneratedFilesUnavailable>

  private init(script: String, prefix: String) {
    output = Result { () throws(GeneratedFilesUnavailable) in try Self.generate(script: script, prefix: prefix) }
  }

  /// The files, or a failure under CI (`CI=true`) and a skip elsewhere when the
  /// Python venv that writes them is missing; a script that fails always fails.
  func get() throws -> Output {
    switch output {
    case .success(let output): return output
    case .failure(let failure):
      if failure.isBroken { XCTFail(failure.message) }
      throw Prerequisite.missing(failure.message)
    }
  }

  private static func generate(script name: String, prefix: String) throws(GeneratedFilesUnavailable) -> Output {
    let environment = ProcessInfo.processInfo.environment
    let python =
      environment["HYBRID_TEST_PYTHON"]
      ?? DefaultModelLocation.cacheDirectory(environment: environment) + "/venv/bin/python"
    guard FileManager.default.isExecutableFile(atPath: python) else {
      throw GeneratedFilesUnavailable(
        message: "no Python venv at \(python): run `make test`, which provisions it", isBroken: false)
    }
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../../scripts/\(name)").standardized.path
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(prefix)-\(ProcessInfo.processInfo.processIdentifier)").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script, directory]
    let stdout = Pipe()
    process.standardOutput = stdout
    do {
      try process.run()
    } catch {
      throw GeneratedFilesUnavailable(message: "cannot run \(python): \(error)", isBroken: true)
    }
    let data = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw GeneratedFilesUnavailable(message: "\(name) exited with \(process.terminationStatus)", isBroken: true)
    }
    let kinds = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    return Output(directory: directory, kinds: kinds)
  }
}

struct GeneratedFilesUnavailable: Error {
  var message: String
  /// True when the venv is there but the script failed: always a failure.
  var isBroken: Bool
}
