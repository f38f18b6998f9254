import Foundation
import HybridInferenceCore
import HybridInferenceDownload
import XCTest

/// The hub cache shared with huggingface_hub, the reference client: a file
/// it fetched is ours with no request, and a file we fetched is its, offline.
final class HubCacheInteropTests: XCTestCase {
  func testAFileHuggingFaceHubFetchedIsUsedWithNoRequest() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("plain")
    let fetched = try HFReference.run(
      "download", repository: repository, file: DownloadTestBed.file, endpoint: server.hubURL,
      cache: try XCTUnwrap(store.hubCache))
    XCTAssertEqual(fetched.status, 0, fetched.stderr)
    let theirs = fetched.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let requests = try server.stats(repository: repository)

    let download = DownloadTestBed.download(repository, store: store)
    XCTAssertEqual(try download.localPath(), theirs)
    let run = DownloadTestBed.Run()
    let path = try await run.download(download)

    XCTAssertEqual(path, theirs)
    XCTAssertEqual(run.progress.count, 1)
    let after = try server.stats(repository: repository)
    XCTAssertEqual(after.hubRequests.count, requests.hubRequests.count, "the hub was asked again")
    XCTAssertEqual(after.cdnRequests.count, requests.cdnRequests.count, "the CDN was asked again")
  }

  func testAFileWeFetchedIsFoundByHuggingFaceHubOffline() async throws {
    let store = try DownloadTestBed.store()
    let repository = DownloadTestBed.repository("plain")
    let ours = try await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))

    let found = try HFReference.run(
      "lookup", repository: repository, file: DownloadTestBed.file, endpoint: try XCTUnwrap(URL(string: "http://127.0.0.1:1")),
      cache: try XCTUnwrap(store.hubCache))

    XCTAssertEqual(found.status, 0, found.stderr)
    XCTAssertEqual(found.stdout.trimmingCharacters(in: .whitespacesAndNewlines), ours)
  }
}
