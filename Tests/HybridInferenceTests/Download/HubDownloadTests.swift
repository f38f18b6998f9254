import Foundation
import HybridInferenceCore
import HybridInferenceDownload
import XCTest

/// Downloads from the hub-like loopback server into the hub cache layout:
/// the layout itself, resuming, and each way the server misbehaves.
final class HubDownloadTests: XCTestCase {
  func testAFileLandsInTheHubLayoutAndASecondRunSendsNothing() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("plain")
    let bytes = try DownloadTestBed.modelBytes()
    let sha = DownloadTestBed.sha256(bytes)
    let run = DownloadTestBed.Run()
    let download = DownloadTestBed.download(repository, store: store)
    XCTAssertNil(try download.localPath())

    let path = try await run.download(download)

    let folder = try XCTUnwrap(store.hubCache).appendingPathComponent(
      "models--" + repository.replacingOccurrences(of: "/", with: "--"))
    let commit = try String(contentsOf: folder.appendingPathComponent("refs/main"), encoding: .utf8)
    XCTAssertEqual(path, folder.appendingPathComponent("snapshots/\(commit)/\(DownloadTestBed.file)").path)
    XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path), "../../blobs/\(sha)")
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
    XCTAssertEqual(DownloadTestBed.files(under: folder.appendingPathComponent("blobs")), [sha])
    DownloadTestBed.assertMonotonic(run.progress, endingAt: Int64(bytes.count))
    XCTAssertEqual(try download.localPath(), path)

    let before = try server.stats(repository: repository)
    let again = DownloadTestBed.Run()
    let second = try await again.download(download)
    XCTAssertEqual(second, path)
    XCTAssertEqual(
      again.progress, [DownloadProgress(completedBytes: Int64(bytes.count), totalBytes: Int64(bytes.count))])
    XCTAssertEqual(
      try server.stats(repository: repository).hubRequests.count, before.hubRequests.count, "a second run asked the hub"
    )
  }

  func testADroppedConnectionResumesWithRangeAndMovesEachByteOnce() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("drop40")
    let bytes = try DownloadTestBed.modelBytes()
    let download = DownloadTestBed.download(repository, store: store)

    do {
      _ = try await DownloadTestBed.Run().download(download)
      XCTFail("the cut transfer succeeded")
    } catch HybridInferenceError.downloadFailed(_, let status, _) {
      XCTAssertNil(status)
    }
    let partial = try XCTUnwrap(
      DownloadTestBed.files(under: try XCTUnwrap(store.hubCache)).first { $0.hasSuffix(".partial") })
    let kept =
      try FileManager.default.attributesOfItem(
        atPath: try XCTUnwrap(store.hubCache).appendingPathComponent(partial).path)[.size] as? Int
    XCTAssertEqual(kept, bytes.count * 40 / 100, "the partial file is not what the server sent")

    let run = DownloadTestBed.Run()
    let path = try await run.download(download)
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
    let stats = try server.stats(repository: repository)
    XCTAssertEqual(stats.cdnBytesSent, bytes.count, "the bytes served do not add up to the file once")
    XCTAssertEqual(stats.cdnRequests.last?.range, "bytes=\(bytes.count * 40 / 100)-")
    XCTAssertNotNil(stats.cdnRequests.last?.ifRange)
    XCTAssertEqual(run.progress.first?.completedBytes, Int64(bytes.count * 40 / 100))
    DownloadTestBed.assertMonotonic(run.progress, endingAt: Int64(bytes.count))
  }

  func testAServerThatIgnoresTheRangeMakesTheDownloadStartOver() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("drop40-norange")
    let bytes = try DownloadTestBed.modelBytes()
    let download = DownloadTestBed.download(repository, store: store)
    _ = try? await DownloadTestBed.Run().download(download)

    let run = DownloadTestBed.Run()
    let path = try await run.download(download)

    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
    XCTAssertEqual(try DownloadTestBed.server().stats(repository: repository).cdnRequests.last?.status, 200)
    DownloadTestBed.assertMonotonic(run.progress, endingAt: Int64(bytes.count))
  }

  func testAFileThatChangedBetweenAttemptsIsFetchedWholeInItsNewVersion() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("changing")
    var changed = try DownloadTestBed.modelBytes()
    changed[changed.count - 1] ^= 0xFF
    let download = DownloadTestBed.download(repository, store: store)
    _ = try? await DownloadTestBed.Run().download(download)

    let path = try await DownloadTestBed.Run().download(download)

    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), changed)
    let blob = try FileManager.default.destinationOfSymbolicLink(atPath: path)
    XCTAssertEqual(blob, "../../blobs/" + DownloadTestBed.sha256(changed))
    let left = DownloadTestBed.files(under: try XCTUnwrap(store.hubCache)).filter { $0.contains(".partial") }
    XCTAssertEqual(left, [], "the first version's partial download was left behind")
  }

  func testWrongBytesFailTheChecksumAndLeaveNothingThatLooksReady() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("wrongbytes")
    let download = DownloadTestBed.download(repository, store: store)
    do {
      _ = try await DownloadTestBed.Run().download(download)
      XCTFail("wrong bytes were accepted")
    } catch HybridInferenceError.checksumMismatch(let expected, let actual) {
      XCTAssertEqual(expected, DownloadTestBed.sha256(try DownloadTestBed.modelBytes()))
      XCTAssertNotEqual(actual, expected)
    }
    XCTAssertNil(try download.localPath())
    let left = DownloadTestBed.files(under: try XCTUnwrap(store.hubCache))
    XCTAssertEqual(left.filter { !$0.hasSuffix(".lock") }, [], "files left: \(left)")
  }

  func testAPinnedChecksumTheHubContradictsFailsBeforeAnyByte() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("plain")
    let pinned = String(repeating: "ab", count: 32)
    let download = DownloadTestBed.download(repository, store: store, sha256: pinned)
    do {
      _ = try await DownloadTestBed.Run().download(download)
      XCTFail("a contradicted pin was downloaded")
    } catch HybridInferenceError.checksumMismatch(let expected, _) {
      XCTAssertEqual(expected, pinned)
    }
    XCTAssertEqual(try server.stats(repository: repository).cdnBytesSent, 0)
  }

  func testAPrivateRepositoryNeedsTheTokenWhichNeverReachesTheCDN() async throws {
    let server = try DownloadTestBed.server()
    let repository = DownloadTestBed.repository("private")
    do {
      _ = try await DownloadTestBed.Run().download(
        DownloadTestBed.download(repository, store: try DownloadTestBed.store(token: nil)))
      XCTFail("a private repository answered without the token")
    } catch HybridInferenceError.downloadFailed(_, let status, _) {
      XCTAssertEqual(status, 401)
    }
    let path = try await DownloadTestBed.Run().download(
      DownloadTestBed.download(repository, store: try DownloadTestBed.store()))
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), try DownloadTestBed.modelBytes())
    let stats = try server.stats(repository: repository)
    XCTAssertTrue(stats.hubAuthorizationSeen)
    XCTAssertFalse(stats.cdnAuthorizationSeen, "the token went to the CDN")
  }

  func testAMissingRepositoryIsA404() async throws {
    let store = try DownloadTestBed.store()
    do {
      _ = try await DownloadTestBed.Run().download(
        DownloadTestBed.download(DownloadTestBed.repository("missing"), store: store))
      XCTFail("a missing repository downloaded")
    } catch HybridInferenceError.downloadFailed(_, let status, _) {
      XCTAssertEqual(status, 404)
    }
  }

  func testARelativeRedirectOfTheHubIsFollowedWithTheToken() async throws {
    let repository = DownloadTestBed.repository("redirectrelative-private")
    let path = try await DownloadTestBed.Run().download(
      DownloadTestBed.download(repository, store: try DownloadTestBed.store()))
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), try DownloadTestBed.modelBytes())
  }
}
