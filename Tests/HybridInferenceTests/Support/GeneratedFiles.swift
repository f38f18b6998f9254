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
/// process: the crafted model files (scripts/make-crafted-models.py), the
/// hostile chat templates (scripts/make-hostile-templates.py), the tiny
/// model with thinking templates (scripts/make-thinking-models.py) and the
/// tiny models carrying each fixture chat template
/// (scripts/make-template-models.py). Each script
/// takes a directory and prints the kinds it wrote, one per line.
final class GeneratedFiles: Sendable {
  struct Output: Sendable {
    var directory: String
    var kinds: [String]
  }

  static let craftedModels = GeneratedFiles(script: "make-crafted-models.py", prefix: "hybrid-crafted")
  static let hostileTemplates = GeneratedFiles(script: "make-hostile-templates.py", prefix: "hybrid-hostile")
  static let thinkingModels = GeneratedFiles(script: "make-thinking-models.py", prefix: "hybrid-thinking")

  /// 70 files, 44 MB: kept between runs under a name that changes with
  /// what writes them (`keyedBy`), rather than written again each run.
  static let templateModels = GeneratedFiles(
    script: "make-template-models.py", prefix: "hybrid-template-models",
    keyedBy: [
      "scripts/make-template-models.py", "scripts/make-tiny-model.py", "Tests/Fixtures/chat-templates/templates",
    ], sizesOf: [llamaBPEVocabulary])

  /// llama.cpp's Llama 3 vocabulary, where scripts/fetch-vocab.sh puts it.
  static var llamaBPEVocabulary: String {
    DefaultModelLocation.cacheDirectory(environment: ProcessInfo.processInfo.environment)
      + "/models/vocab/ggml-vocab-llama-bpe.gguf"
  }

  let output: Result<Output, GeneratedFilesUnavailable>

  /// `sizesOf`: files outside the repository (large ones) that key the set
  /// by their path and size: one the set-up adds later makes a new set.
  private init(script: String, prefix: String, keyedBy inputs: [String] = [], sizesOf outside: [String] = []) {
    output = Result { () throws(GeneratedFilesUnavailable) in
      guard !inputs.isEmpty else {
        return try Self.generate(script: script, into: Self.temporary("\(prefix)-\(getpid())"))
      }
      return try Self.generateOnce(script: script, prefix: prefix, keyedBy: inputs, sizesOf: outside)
    }
  }

  private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../..").standardized

  private static func temporary(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent(name).path
  }

  /// The files in a directory named by a digest of `inputs` (files, or
  /// folders' files, under the repository root): written by the first run
  /// that lacks them (into a folder of its own, then renamed, so two runs at
  /// once never read half a set), read by every later one. `kinds` holds the
  /// script's output and marks the set complete.
  private static func generateOnce(script: String, prefix: String, keyedBy inputs: [String], sizesOf outside: [String])
    throws(GeneratedFilesUnavailable) -> Output
  {
    var digest = SHA256()
    for path in outside {
      let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
      digest.update(Array("\(path) \(size)".utf8))
    }
    for input in inputs {
      let url = root.appendingPathComponent(input)
      let files =
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [""]).sorted()
        .map { $0.isEmpty ? url : url.appendingPathComponent($0) }
      for file in files {
        digest.update(Array(file.lastPathComponent.utf8))
        digest.update((try? Data(contentsOf: file)) ?? Data())
      }
    }
    let directory = temporary("\(prefix)-\(SHA256.hex(of: digest.finalize().prefix(8)))")
    let kindsFile = directory + "/kinds"
    if let kinds = try? String(contentsOfFile: kindsFile, encoding: .utf8) {
      return Output(directory: directory, kinds: kinds.split(separator: "\n").map(String.init))
    }
    let staging = directory + ".\(getpid())"
    let output = try generate(script: script, into: staging)
    FileManager.default.createFile(
      atPath: staging + "/kinds", contents: Data(output.kinds.joined(separator: "\n").utf8))
    // Another run may have renamed its own set there first: then that one is read.
    if (try? FileManager.default.moveItem(atPath: staging, toPath: directory)) == nil {
      try? FileManager.default.removeItem(atPath: staging)
    }
    return Output(directory: directory, kinds: output.kinds)
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

  private static func generate(script name: String, into directory: String) throws(GeneratedFilesUnavailable) -> Output
  {
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
