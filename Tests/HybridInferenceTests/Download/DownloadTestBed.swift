import Foundation
import GeminiServerProcess
import HybridInferenceCore
import HybridInferenceDownload
import TestPrerequisites
import XCTest

/// What the download tests share: one hub-like loopback server for the
/// whole run (started on first use), the model file it serves, and a fresh
/// store per test.
enum DownloadTestBed {
  static let token = "hf_test_token_0123456789"
  static let file = "tiny-random-llama.gguf"

  private static let shared = Locked<HubServerProcess?>(nil)

  /// The server, started once per test run.
  static func server() throws -> HubServerProcess {
    let model = try modelFile()
    return try shared.withLock { server in
      if let server { return server }
      let started = try HubServerProcess(file: model, token: token)
      server = started
      return started
    }
  }

  /// The GGUF file the server serves (the tiny test model).
  static func modelFile() throws -> URL {
    guard let path = ProcessInfo.processInfo.environment["HYBRID_TEST_TINY_MODEL"],
      FileManager.default.fileExists(atPath: path)
    else { throw Prerequisite.missing("the tiny test model (HYBRID_TEST_TINY_MODEL; make setup)") }
    return URL(fileURLWithPath: path)
  }

  static func modelBytes() throws -> Data { try Data(contentsOf: modelFile()) }

  static func sha256(_ data: Data) -> String {
    var hash = SHA256()
    hash.update(data)
    return hash.hexDigest
  }

  /// A store in a new temporary directory, its hub cache inside it, the
  /// loopback hub as endpoint.
  static func store(token: String? = token, endpoint: URL? = nil) throws -> ModelStore {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    return ModelStore(
      directory: root.appendingPathComponent("models"), hubCache: root.appendingPathComponent("hub"),
      hubEndpoint: try endpoint ?? server().hubURL, hubToken: token)
  }

  /// A repository name unique to one test, carrying the server's behaviour words.
  static func repository(_ words: String) -> String {
    "test/\(words)-\(UUID().uuidString.prefix(8).lowercased())"
  }

  /// Collects the progress of a download and the path, or the error.
  final class Run: Sendable {
    let updates = Locked<[DownloadProgress]>([])
    var progress: [DownloadProgress] { updates.withLock { $0 } }

    func download(_ download: ModelDownload) async throws -> String {
      try await download.run { progress in self.updates.withLock { $0.append(progress) } }
    }
  }

  /// A download of the tiny model's file from `repository` into `store`,
  /// with the GGUF check a model download runs.
  static func download(
    _ repository: String, store: ModelStore, file: String = file, revision: String = "main", sha256: String? = nil
  ) -> ModelDownload {
    ModelDownload(
      source: .huggingFace(repository: repository, file: file, revision: revision, sha256: sha256), store: store
    ) { path in
      let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
      guard data.starts(with: Array("GGUF".utf8)) else {
        throw HybridInferenceError.invalidModelFile(path: path, reason: "not GGUF")
      }
    }
  }

  /// Every regular file and link under `directory`, relative, sorted.
  static func files(under directory: URL) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
    return walker.compactMap { $0 as? String }.filter { relative in
      var status = stat()
      return lstat(directory.appendingPathComponent(relative).path, &status) == 0
        && status.st_mode & S_IFMT != S_IFDIR
    }.sorted()
  }

  /// Asserts `progress` never goes down and ends at `total`.
  static func assertMonotonic(
    _ progress: [DownloadProgress], endingAt total: Int64, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertFalse(progress.isEmpty, "no progress", file: file, line: line)
    for (earlier, later) in zip(progress, progress.dropFirst()) {
      XCTAssertLessThanOrEqual(
        earlier.completedBytes, later.completedBytes, "progress went down", file: file, line: line)
    }
    XCTAssertEqual(progress.last?.completedBytes, total, file: file, line: line)
    XCTAssertEqual(progress.last?.totalBytes, total, file: file, line: line)
    XCTAssertEqual(progress.last?.fractionCompleted, 1, file: file, line: line)
  }
}
