import Foundation
import TestPrerequisites
import XCTest

/// The tiny random-weight model with a template that opens a `<think>` block
/// in its generation prompt (scripts/make-thinking-models.py, kind
/// `opened`): everything it writes is thought until the block closes, so the
/// command's thoughts can be followed end to end. Written once per test
/// process with the set-up's Python venv, as the library's tests write it.
enum ThinkingModelFile {
  /// The model's path, or why there is none.
  private static let generated: Result<String, Missing> = Result { () throws(Missing) in try generate() }

  private struct Missing: Error {
    var message: String
    /// True when the venv is there but the script failed: always a failure.
    var isBroken: Bool
  }

  /// The model's path; fails the test where prerequisites are required, or
  /// always when the script itself fails.
  static func require() throws -> String {
    switch generated {
    case .success(let path): return path
    case .failure(let missing):
      if missing.isBroken { XCTFail(missing.message) }
      throw Prerequisite.missing(missing.message)
    }
  }

  private static func generate() throws(Missing) -> String {
    let environment = HybridChatProcess.environment
    let cache =
      environment["HYBRID_INFERENCE_CACHE"]
      ?? environment["XDG_CACHE_HOME"].map { $0 + "/hybrid-inference" }
      ?? NSHomeDirectory() + "/.cache/hybrid-inference"
    let python = environment["HYBRID_TEST_PYTHON"] ?? cache + "/venv/bin/python"
    guard FileManager.default.isExecutableFile(atPath: python) else {
      throw Missing(message: "no Python venv at \(python): run `make test`, which provisions it", isBroken: false)
    }
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../scripts/make-thinking-models.py").standardized.path
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("hybrid-chat-thinking-\(ProcessInfo.processInfo.processIdentifier)").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script, directory]
    process.standardOutput = FileHandle.nullDevice
    do {
      try process.run()
    } catch {
      throw Missing(message: "cannot run \(python): \(error)", isBroken: true)
    }
    process.waitUntilExit()
    let path = directory + "/opened.gguf"
    guard process.terminationStatus == 0, FileManager.default.fileExists(atPath: path) else {
      throw Missing(
        message: "make-thinking-models.py exited with \(process.terminationStatus) without \(path)", isBroken: true)
    }
    return path
  }
}
