import Foundation
import HybridInferenceCore
import HybridInferenceDownload
import XCTest

/// A server or a store that misbehaves: every case ends in a typed error,
/// nothing written outside the store, memory and disk bounded.
final class HostileDownloadTests: XCTestCase {
  private func failure(_ repository: String, store: ModelStore? = nil) async throws -> HybridInferenceError {
    let store = try store ?? DownloadTestBed.store()
    do {
      _ = try await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
    } catch let error as HybridInferenceError {
      return error
    }
    throw XCTSkip("unreachable: the download of \(repository) succeeded")
  }

  func testARedirectLoopEnds() async throws {
    let error = try await failure(DownloadTestBed.repository("redirectloop"))
    guard case .downloadFailed(_, _, let reason) = error else { return XCTFail("\(error)") }
    XCTAssertTrue(reason.contains("redirects"), reason)
  }

  func testARedirectToPlainHTTPOffThisMachineIsRefused() async throws {
    let error = try await failure(DownloadTestBed.repository("redirectexternal"))
    guard case .redirectRefused(_, let to) = error else { return XCTFail("\(error)") }
    XCTAssertTrue(to.contains("203.0.113.5"), to)
  }

  func testAContentLengthThatLiesIsRefusedBeforeAByteIsWritten() async throws {
    let store = try DownloadTestBed.store()
    let error = try await failure(DownloadTestBed.repository("lyinglength"), store: store)
    guard case .downloadFailed(_, let status, _) = error else { return XCTFail("\(error)") }
    XCTAssertEqual(status, 200)
    XCTAssertEqual(DownloadTestBed.files(under: try XCTUnwrap(store.hubCache)).filter { !$0.hasSuffix(".lock") }, [])
  }

  func testABodyThatNeverEndsStopsAtTheFileSize() async throws {
    let store = try DownloadTestBed.store()
    let error = try await failure(DownloadTestBed.repository("endless"), store: store)
    guard case .downloadFailed(_, _, let reason) = error else { return XCTFail("\(error)") }
    XCTAssertTrue(reason.contains("more than"), reason)
    XCTAssertEqual(DownloadTestBed.files(under: try XCTUnwrap(store.hubCache)).filter { !$0.hasSuffix(".lock") }, [])
  }

  func testA206ForAnotherRangeIsRefusedAndThePartialKept() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("drop40-badrange")
    _ = try? await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
    let error = try await failure(repository, store: store)
    guard case .downloadFailed(_, let status, let reason) = error else { return XCTFail("\(error)") }
    XCTAssertEqual(status, 206)
    XCTAssertTrue(reason.contains("Content-Range"), reason)
    XCTAssertTrue(DownloadTestBed.files(under: try XCTUnwrap(store.hubCache)).contains { $0.hasSuffix(".partial") })
  }

  func testNamesThatClimbOutOfTheStoreAreRefusedBeforeAnyRequest() async throws {
    // An endpoint nothing listens on: a request would fail as a download, not as a source.
    let store = try DownloadTestBed.store(endpoint: URL(string: "http://127.0.0.1:1"))
    let sources: [(String, String, String)] = [
      ("../escape", "m.gguf", "main"), ("a/../../b", "m.gguf", "main"), ("org/name/extra", "m.gguf", "main"),
      ("org/na--me", "m.gguf", "main"), ("org/name", "../../../etc/passwd", "main"), ("org/name", "a//b.gguf", "main"),
      ("org/name", "/abs.gguf", "main"), ("org/name", "dir/./m.gguf", "main"), ("org/name", "m\u{1B}[2J.gguf", "main"),
      ("org/name", "a\\..\\b", "main"), ("org/name", "m.gguf", ".."), ("org/name", "m.gguf", "refs/../../x"),
      ("", "m.gguf", "main"), ("org/name", "", "main"),
    ]
    for (repository, file, revision) in sources {
      let download = DownloadTestBed.download(repository, store: store, file: file, revision: revision)
      do {
        _ = try await DownloadTestBed.Run().download(download)
        XCTFail("\(repository) \(file) \(revision) downloaded")
      } catch HybridInferenceError.invalidModelSource {
      } catch {
        XCTFail("\(repository) \(file) \(revision): \(error)")
      }
    }
    XCTAssertEqual(DownloadTestBed.files(under: store.directory.deletingLastPathComponent()), [])
  }

  func testALinkPlantedWhereThePartialGoesIsNotFollowed() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("plain")
    let sha = DownloadTestBed.sha256(try DownloadTestBed.modelBytes())
    let cache = try XCTUnwrap(store.hubCache)
    let blobs = cache.appendingPathComponent(
      "models--" + repository.replacingOccurrences(of: "/", with: "--") + "/blobs")
    try FileManager.default.createDirectory(at: blobs, withIntermediateDirectories: true)
    let victim = store.directory.deletingLastPathComponent().appendingPathComponent("victim.txt")
    try Data("keep me".utf8).write(to: victim)
    try FileManager.default.createSymbolicLink(
      atPath: blobs.appendingPathComponent(sha + ".partial").path, withDestinationPath: victim.path)
    try FileManager.default.createSymbolicLink(
      atPath: blobs.appendingPathComponent(sha).path + ".partial.json", withDestinationPath: victim.path)

    let path = try await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))

    XCTAssertEqual(try Data(contentsOf: victim), Data("keep me".utf8))
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), try DownloadTestBed.modelBytes())
  }

  func testCancellingKeepsThePartialFileAndTheNextRunResumesIt() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("slow")
    let bytes = try DownloadTestBed.modelBytes()
    let download = DownloadTestBed.download(repository, store: store)
    let run = DownloadTestBed.Run()
    let task = Task { try await run.download(download) }
    while run.progress.last.map({ $0.completedBytes < 200_000 }) ?? true {
      try await Task.sleep(for: .milliseconds(20))
    }
    task.cancel()
    do {
      _ = try await task.value
      XCTFail("the cancelled download finished")
    } catch is CancellationError {}
    let partial = try XCTUnwrap(
      DownloadTestBed.files(under: try XCTUnwrap(store.hubCache)).first { $0.hasSuffix(".partial") })
    let kept = try XCTUnwrap(
      try FileManager.default.attributesOfItem(
        atPath: try XCTUnwrap(store.hubCache).appendingPathComponent(partial).path)[.size] as? Int)
    XCTAssertGreaterThan(kept, 0)

    let resumed = DownloadTestBed.Run()
    let path = try await resumed.download(download)
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
    XCTAssertEqual(try server.stats(repository: repository).cdnRequests.last?.range, "bytes=\(kept)-")
    DownloadTestBed.assertMonotonic(resumed.progress, endingAt: Int64(bytes.count))
  }

  func testTwoDownloadsOfOneFileAtOnceFetchItOnce() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("slow")
    async let first = DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
    async let second = DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
    let paths = try await [first, second]
    XCTAssertEqual(paths[0], paths[1])
    XCTAssertEqual(try server.stats(repository: repository).cdnRequests.filter { $0.method == "GET" }.count, 1)
  }
}
