import Foundation
import GeminiServerProcess
import TestPrerequisites
import XCTest

/// The loopback hub and CDN (Tests/HubServer/hub_server.py) behave as the
/// download tests rely on: huggingface_hub, the reference client, downloads
/// through them into its cache layout; private repositories want the token,
/// which never reaches the CDN; ranges, If-Range, the faults and the byte
/// counts are what the script's header says.
final class HubServerTests: XCTestCase {
  /// One server for the class: started by `setUp()`, stopped by `tearDown()`.
  private static let shared = HubTestServer.start()

  override class func setUp() {
    super.setUp()
    _ = shared
  }

  override class func tearDown() {
    if case .success(let hub) = shared { hub.server.stop() }
    super.tearDown()
  }

  private func hub(file: StaticString = #filePath, line: UInt = #line) throws -> HubTestServer {
    switch Self.shared {
    case .success(let hub): return hub
    case .failure(let unavailable): throw Prerequisite.missing(unavailable.message, file: file, line: line)
    }
  }

  private func unique(_ words: String) -> String { "org/\(words)-\(UUID().uuidString.lowercased())" }

  private func temporaryCache() throws -> URL {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("hub-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    addTeardownBlock { try? FileManager.default.removeItem(at: root) }
    return root.appendingPathComponent("cache")
  }

  func testHuggingFaceHubDownloadsIntoItsCacheLayout() throws {
    let hub = try hub()
    _ = try HFReference.require()
    let repository = unique("plain")
    let cache = try temporaryCache()
    let head = try hub.hub(repository: repository)
    let commit = try XCTUnwrap(head.header("X-Repo-Commit"))
    XCTAssertNotNil(commit.wholeMatch(of: /[0-9a-f]{40}/), commit)
    XCTAssertEqual(head.header("X-Linked-Etag"), "\"\(hub.sha256[1] ?? "")\"")
    XCTAssertEqual(head.header("X-Linked-Size"), "\(hub.bytes.count)")
    XCTAssertEqual(head.header("Content-Length"), "0")

    let download = try HFReference.run("download", repository: repository, endpoint: hub.server.hubURL, cache: cache)
    XCTAssertEqual(download.status, 0, download.stderr)
    let folder = cache.appendingPathComponent("models--" + repository.replacingOccurrences(of: "/", with: "--"))
    let sha = try XCTUnwrap(hub.sha256[1])
    let snapshot = folder.appendingPathComponent("snapshots/\(commit)/model.gguf")
    XCTAssertEqual(download.stdout.trimmingCharacters(in: .newlines), snapshot.path)
    XCTAssertEqual(
      try FileManager.default.destinationOfSymbolicLink(atPath: snapshot.path), "../../blobs/\(sha)")
    let blob = try Data(contentsOf: folder.appendingPathComponent("blobs/\(sha)"))
    XCTAssertTrue(blob.elementsEqual(hub.bytes), "the blob is not the served file")
    XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("refs/main"), encoding: .utf8), commit)

    let lookup = try HFReference.run("lookup", repository: repository, endpoint: hub.server.hubURL, cache: cache)
    XCTAssertEqual(lookup.status, 0, lookup.stderr)
    XCTAssertEqual(lookup.stdout.trimmingCharacters(in: .newlines), snapshot.path)
    let absent = try HFReference.run(
      "lookup", repository: repository, revision: "v2", endpoint: hub.server.hubURL, cache: cache)
    XCTAssertEqual(absent.status, 3, "an uncached revision: \(absent.stdout) \(absent.stderr)")

    let stats = try hub.server.stats(repository: repository)
    XCTAssertEqual(stats.hubRequests.map(\.method), ["HEAD", "HEAD"])
    XCTAssertEqual(stats.cdnRequests.map(\.method), ["GET"])
    XCTAssertEqual(stats.cdnRequests.first?.status, 200)
    XCTAssertEqual(stats.cdnBytesSent, hub.bytes.count)
  }

  func testPrivateRepositoryWantsTheTokenWhichNeverReachesTheCDN() throws {
    let hub = try hub()
    _ = try HFReference.require()
    let repository = unique("private")
    let cache = try temporaryCache()
    let refused = try HFReference.run("download", repository: repository, endpoint: hub.server.hubURL, cache: cache)
    XCTAssertNotEqual(refused.status, 0)
    XCTAssertTrue(refused.stderr.hasPrefix("RepositoryNotFoundError: 401"), refused.stderr)
    let wrong = try hub.hub(repository: repository, headers: [("Authorization", "Bearer hf_other")])
    XCTAssertEqual(wrong.status, 401)
    XCTAssertEqual(wrong.header("X-Error-Code"), "RepoNotFound")

    let download = try HFReference.run(
      "download", repository: repository, endpoint: hub.server.hubURL, cache: cache, token: HubTestServer.token)
    XCTAssertEqual(download.status, 0, download.stderr)
    let stats = try hub.server.stats(repository: repository)
    XCTAssertEqual(stats.hubRequests.map(\.status), [401, 401, 302])
    XCTAssertTrue(stats.hubAuthorizationSeen)
    XCTAssertFalse(stats.cdnAuthorizationSeen)
    XCTAssertEqual(stats.cdnBytesSent, hub.bytes.count)

    // A client that forwards the token to the CDN is refused there, and seen.
    let location = try XCTUnwrap(
      hub.hub(repository: repository, headers: [("Authorization", "Bearer \(HubTestServer.token)")])
        .header("Location"))
    let leaked = try hub.cdn(location, headers: [("Authorization", "Bearer \(HubTestServer.token)")])
    XCTAssertEqual(leaked.status, 400)
    XCTAssertTrue(try hub.server.stats(repository: repository).cdnAuthorizationSeen)
  }

  func testDrop40CutsOnlyTheFirstGetAndAResumeMovesOnlyTheRest() throws {
    let hub = try hub()
    let repository = unique("drop40")
    let location = try hub.location(repository)
    let size = hub.bytes.count
    let cut = try hub.cdn(location)
    XCTAssertEqual(cut.status, 200)
    XCTAssertEqual(cut.header("Content-Length"), "\(size)")
    XCTAssertEqual(cut.body.count, size * 40 / 100, "the first GET must close after 40% of the body")
    XCTAssertEqual(cut.body[...], hub.bytes[..<cut.body.count])

    let etag = try XCTUnwrap(cut.header("ETag"))
    let rest = try hub.cdn(location, headers: [("Range", "bytes=\(cut.body.count)-"), ("If-Range", etag)])
    XCTAssertEqual(rest.status, 206)
    XCTAssertEqual(rest.header("Content-Range"), "bytes \(cut.body.count)-\(size - 1)/\(size)")
    XCTAssertEqual(cut.body + rest.body, hub.bytes)

    let stats = try hub.server.stats(repository: repository)
    XCTAssertEqual(stats.cdnRequests.map(\.bytesSent), [cut.body.count, size - cut.body.count])
    XCTAssertEqual(stats.cdnRequests.last?.range, "bytes=\(cut.body.count)-")
    XCTAssertEqual(stats.cdnRequests.last?.ifRange, etag)
    XCTAssertEqual(stats.cdnBytesSent, size, "a resumed download moves each byte once")
  }

  func testRangesAndIfRangeOnPlainURLs() throws {
    let hub = try hub()
    let name = "plain-\(UUID().uuidString.lowercased())"
    let location = try hub.fileLocation(name)
    let size = hub.bytes.count
    let whole = try hub.cdn(location)
    XCTAssertEqual(whole.status, 200)
    XCTAssertEqual(whole.body, hub.bytes)
    XCTAssertEqual(whole.header("Accept-Ranges"), "bytes")
    XCTAssertNotNil(whole.header("Last-Modified"))
    let etag = try XCTUnwrap(whole.header("ETag"))
    XCTAssertEqual(etag, "\"\(hub.sha256[1] ?? "")\"")

    let middle = try hub.cdn(location, headers: [("Range", "bytes=10-19")])
    XCTAssertEqual(middle.status, 206)
    XCTAssertEqual(middle.header("Content-Range"), "bytes 10-19/\(size)")
    XCTAssertEqual(middle.body[...], hub.bytes[10..<20])
    let tail = try hub.cdn(location, headers: [("Range", "bytes=100-"), ("If-Range", etag)])
    XCTAssertEqual(tail.status, 206)
    XCTAssertEqual(tail.body[...], hub.bytes[100...])
    let stale = try hub.cdn(location, headers: [("Range", "bytes=100-"), ("If-Range", "\"stale\"")])
    XCTAssertEqual(stale.status, 200, "If-Range with another ETag gets the whole file")
    XCTAssertEqual(stale.body, hub.bytes)
    XCTAssertEqual(try hub.cdn(location, headers: [("Range", "bytes=\(size)-")]).status, 416)
    let head = try hub.cdn(location, method: "HEAD")
    XCTAssertEqual(head.header("Content-Length"), "\(size)")
    XCTAssertTrue(head.body.isEmpty)

    let stats = try hub.server.stats(repository: "files/\(name)")
    XCTAssertEqual(stats.cdnRequests.map(\.status), [200, 206, 206, 200, 416, 200])
    XCTAssertEqual(stats.cdnBytesSent, size + 10 + (size - 100) + size)
    XCTAssertTrue(stats.hubRequests.isEmpty)
  }

  func testChangingMovesToVersion2AfterTheCut() throws {
    let hub = try hub()
    let repository = unique("changing")
    let before = try hub.hub(repository: repository)
    let location = try XCTUnwrap(before.header("Location"))
    let cut = try hub.cdn(location)
    XCTAssertLessThan(cut.body.count, hub.bytes.count)
    let v1 = try XCTUnwrap(cut.header("ETag"))

    let after = try hub.hub(repository: repository)
    XCTAssertNotEqual(after.header("X-Repo-Commit"), before.header("X-Repo-Commit"))
    XCTAssertNotEqual(after.header("ETag"), before.header("ETag"))
    XCTAssertEqual(after.header("X-Linked-Etag"), "\"\(hub.sha256[2] ?? "")\"")
    let resumed = try hub.cdn(location, headers: [("Range", "bytes=\(cut.body.count)-"), ("If-Range", v1)])
    XCTAssertEqual(resumed.status, 200, "a resume against version 1 gets the whole of version 2")
    XCTAssertEqual(resumed.body, hub.bytesVersion2)
    XCTAssertEqual(resumed.header("ETag"), "\"\(hub.sha256[2] ?? "")\"")
  }

  func testCDNFaultsAnswerAsDocumented() throws {
    let hub = try hub()
    let size = hub.bytes.count
    let norange = try hub.cdn(hub.location(unique("norange")), headers: [("Range", "bytes=100-")])
    XCTAssertEqual(norange.status, 200)
    XCTAssertEqual(norange.body, hub.bytes)
    XCTAssertNil(norange.header("Accept-Ranges"))

    let badrange = try hub.cdn(hub.location(unique("badrange")), headers: [("Range", "bytes=100-")])
    XCTAssertEqual(badrange.status, 206)
    XCTAssertEqual(badrange.header("Content-Range"), "bytes 0-\(size - 101)/\(size)")

    let lying = try hub.cdn(hub.location(unique("lyinglength")))
    XCTAssertEqual(lying.header("Content-Length"), "\(size + 1000)")
    XCTAssertEqual(lying.body, hub.bytes + [UInt8](repeating: 0, count: 1000))

    let endlessName = unique("endless")
    let endless = try hub.cdn(hub.location(endlessName), bodyLimit: size + (1 << 20))
    XCTAssertNil(endless.header("Content-Length"))
    XCTAssertGreaterThanOrEqual(endless.body.count, size + (1 << 20))
    XCTAssertEqual(endless.body[..<size], hub.bytes[...])

    let wrong = try hub.hub(repository: unique("wrongbytes"))
    XCTAssertEqual(wrong.header("X-Linked-Etag"), "\"\(hub.sha256[1] ?? "")\"")
    XCTAssertEqual(try hub.cdn(XCTUnwrap(wrong.header("Location"))).body, hub.bytesVersion2)

    let slowName = unique("slow")
    let start = Date()
    let slow = try hub.cdn(hub.location(slowName), headers: [("Range", "bytes=0-\(4 * 65536 - 1)")])
    XCTAssertEqual(slow.body.count, min(size, 4 * 65536))
    if size >= 4 * 65536 {
      XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.29, "4 writes of 64 KiB, 100 ms apart")
    }
  }

  func testHubFaultsAnswerAsDocumented() throws {
    let hub = try hub()
    XCTAssertEqual(try hub.hub(repository: unique("missing")).status, 404)

    let loop = unique("redirectloop")
    let looping = try hub.hub(repository: loop)
    XCTAssertEqual(looping.status, 302)
    XCTAssertEqual(
      looping.header("Location"), try hub.server.resolveURL(repository: loop, path: "model.gguf").absoluteString)

    let external = try hub.hub(repository: unique("redirectexternal"))
    XCTAssertEqual(external.header("Location"), "http://203.0.113.5/x")
    XCTAssertNotNil(external.header("X-Repo-Commit"))

    let relative = unique("redirectrelative")
    let first = try hub.hub(repository: relative)
    XCTAssertEqual(first.status, 307)
    XCTAssertEqual(first.header("Location"), "/\(relative)/resolve/refs%2Fheads%2Fmain/model.gguf")
    let second = try hub.hub(repository: relative, revision: "refs/heads/main")
    XCTAssertEqual(second.status, 302)
    XCTAssertEqual(
      second.header("X-Repo-Commit"), try hub.hub(repository: relative, revision: "refs/pr/1").header("X-Repo-Commit"))
    let stats = try hub.server.stats(repository: relative)
    XCTAssertEqual(stats.hubRequests.map(\.revision), ["main", "refs/heads/main", "refs/pr/1"])
  }

  func testAServerThatCannotStartSaysWhy() throws {
    _ = try hub()
    let missing = URL(fileURLWithPath: "/nonexistent/model-\(UUID().uuidString).gguf")
    XCTAssertThrowsError(try HubServerProcess(file: missing, token: HubTestServer.token)) { error in
      XCTAssertTrue("\(error)".contains("hub_server.py did not start"), "\(error)")
      XCTAssertTrue("\(error)".contains("No such file"), "the server's stderr: \(error)")
    }
  }
}
