import Foundation
import HybridInferenceCore
import HybridInferenceDownload
import XCTest

/// Limits of the machine around a download: the disk, and another process
/// fetching the same file.
final class StoreLimitsTests: XCTestCase {
  func testAFileLargerThanTheFreeSpaceFailsBeforeTheTransfer() async throws {
    let server = try DownloadTestBed.server()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("full-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let repository = DownloadTestBed.repository("plain")
    let size = try DownloadTestBed.modelBytes().count
    guard Self.mountSmallFileSystem(at: root, bytes: 64 << 10) else {
      return try await assertWriteFailureInChild()
    }
    defer { Self.unmount(root) }
    let store = ModelStore(
      directory: root.appendingPathComponent("models"), hubCache: root.appendingPathComponent("hub"),
      hubEndpoint: server.hubURL, hubToken: nil)
    do {
      _ = try await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
      XCTFail("a file larger than the disk downloaded")
    } catch HybridInferenceError.insufficientDiskSpace(let needed, let available) {
      XCTAssertEqual(needed, Int64(size))
      XCTAssertLessThanOrEqual(available, 64 << 10)
    }
    XCTAssertEqual(try server.stats(repository: repository).cdnBytesSent, 0)
  }

  /// Where no file system can be mounted (not root, or in a container that
  /// forbids it): a write the kernel refuses (`RLIMIT_FSIZE`, the signal
  /// ignored) is a typed error, in a child process whose limit the test run
  /// does not share.
  private func assertWriteFailureInChild() async throws {
    try await ChildProcess.assertPasses(self) {
      signal(SIGXFSZ, SIG_IGN)
      var limit = rlimit(rlim_cur: 100_000, rlim_max: 100_000)
      XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit), 0)
      let store = try DownloadTestBed.store()
      do {
        _ = try await DownloadTestBed.Run().download(
          DownloadTestBed.download(DownloadTestBed.repository("plain"), store: store))
        XCTFail("a write past the file size limit succeeded")
      } catch HybridInferenceError.downloadFailed(_, nil, let reason) {
        XCTAssertTrue(reason.contains("cannot write"), reason)
      }
    }
  }

  func testTwoProcessesDownloadingOneFileFetchItOnce() async throws {
    let environment = ProcessInfo.processInfo.environment
    if ChildProcess.isChild(of: self) {
      let root = URL(fileURLWithPath: try XCTUnwrap(environment["DOWNLOAD_TEST_ROOT"]))
      let store = ModelStore(
        directory: root.appendingPathComponent("models"), hubCache: root.appendingPathComponent("hub"),
        hubEndpoint: URL(string: try XCTUnwrap(environment["DOWNLOAD_TEST_HUB"])), hubToken: nil)
      let path = try await DownloadTestBed.Run().download(
        DownloadTestBed.download(try XCTUnwrap(environment["DOWNLOAD_TEST_REPOSITORY"]), store: store))
      print("DOWNLOADED \(path)")
      return
    }
    let server = try DownloadTestBed.server()
    let store = try DownloadTestBed.store(token: nil)
    let repository = DownloadTestBed.repository("slow")
    let (child, output) = try ChildProcess.start(
      self,
      environment: [
        "DOWNLOAD_TEST_ROOT": store.directory.deletingLastPathComponent().path,
        "DOWNLOAD_TEST_HUB": server.hubURL.absoluteString, "DOWNLOAD_TEST_REPOSITORY": repository,
      ])
    let path = try await DownloadTestBed.Run().download(DownloadTestBed.download(repository, store: store))
    let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    XCTAssertEqual(child.terminationStatus, 0, log)
    XCTAssertTrue(log.contains("DOWNLOADED \(path)"), log)
    XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), try DownloadTestBed.modelBytes())
    XCTAssertEqual(try server.stats(repository: repository).cdnRequests.filter { $0.method == "GET" }.count, 1)
  }

  /// Mounts a tmpfs of `bytes` at `directory`; false where the system refuses.
  static func mountSmallFileSystem(at directory: URL, bytes: Int) -> Bool {
    run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path])
  }

  static func unmount(_ directory: URL) {
    _ = run("/bin/umount", [directory.path])
  }

  private static func run(_ tool: String, _ arguments: [String]) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
  }
}
