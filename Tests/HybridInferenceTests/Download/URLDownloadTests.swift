import Foundation
import HybridInferenceCore
import HybridInferenceDownload
import XCTest

/// `.url` sources: a file at a URL with its SHA-256, kept in the store's
/// directory under that SHA-256.
final class URLDownloadTests: XCTestCase {
  private func download(_ url: URL, sha256: String, store: ModelStore) -> ModelDownload {
    ModelDownload(source: .url(url, sha256: sha256), store: store) { _ in }
  }

  func testAPinnedURLLandsInTheStoreUnderItsChecksum() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let bytes = try DownloadTestBed.modelBytes()
    let sha = DownloadTestBed.sha256(bytes)
    let url = server.cdnURL.appendingPathComponent("files/plain-\(UUID().uuidString.prefix(8))/model.gguf")
    let run = DownloadTestBed.Run()

    let path = try await run.download(download(url, sha256: sha.uppercased(), store: store))

    XCTAssertEqual(path, store.directory.appendingPathComponent("\(sha)/model.gguf").path)
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
    XCTAssertEqual(
      DownloadTestBed.files(under: store.directory).filter { !$0.hasSuffix(".lock") }, ["\(sha)/model.gguf"])
    DownloadTestBed.assertMonotonic(run.progress, endingAt: Int64(bytes.count))
    XCTAssertEqual(try download(url, sha256: sha, store: store).localPath(), path)
  }

  func testADroppedURLDownloadResumes() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let bytes = try DownloadTestBed.modelBytes()
    let name = "drop40-\(UUID().uuidString.prefix(8))"
    let url = server.cdnURL.appendingPathComponent("files/\(name)/model.gguf")
    let download = download(url, sha256: DownloadTestBed.sha256(bytes), store: store)
    _ = try? await DownloadTestBed.Run().download(download)
    let path = try await DownloadTestBed.Run().download(download)
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), bytes)
  }

  func testAnotherChecksumFailsAndLeavesNothing() async throws {
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store()
    let url = server.cdnURL.appendingPathComponent("files/plain-\(UUID().uuidString.prefix(8))/model.gguf")
    let wrong = String(repeating: "0", count: 64)
    do {
      _ = try await DownloadTestBed.Run().download(download(url, sha256: wrong, store: store))
      XCTFail("a file with another checksum was kept")
    } catch HybridInferenceError.checksumMismatch(let expected, let actual) {
      XCTAssertEqual(expected, wrong)
      XCTAssertEqual(actual, DownloadTestBed.sha256(try DownloadTestBed.modelBytes()))
    }
    XCTAssertEqual(DownloadTestBed.files(under: store.directory).filter { !$0.hasSuffix(".lock") }, [])
  }

  func testPlainHTTPOffThisMachineAndBadChecksumsAreRefusedBeforeAnyRequest() async throws {
    let store = try DownloadTestBed.store()
    let cases: [(String, String)] = [
      ("http://203.0.113.5/model.gguf", String(repeating: "a", count: 64)),
      ("ftp://127.0.0.1/model.gguf", String(repeating: "a", count: 64)),
      ("http://127.0.0.1:1/model.gguf", "not-a-checksum"),
      ("http://127.0.0.1:1/", String(repeating: "a", count: 64)),
    ]
    for (text, sha) in cases {
      do {
        _ = try await DownloadTestBed.Run().download(
          download(try XCTUnwrap(URL(string: text)), sha256: sha, store: store))
        XCTFail("\(text) downloaded")
      } catch HybridInferenceError.invalidModelSource {
      } catch {
        XCTFail("\(text): \(error)")
      }
    }
  }
}
