import Foundation
import GeminiServerProcess
import HybridChatCore
import HybridInferenceCore
import Synchronization
import TestPrerequisites
import XCTest

/// `--model hf:...` and `--model https://...#sha256=` end to end: the binary
/// downloads from the loopback hub and CDN (Tests/HubServer/hub_server.py,
/// serving the tiny model), then answers; Ctrl-C stops a download and the
/// next run resumes it with Range.
final class CLIDownloadEndToEndTests: XCTestCase {
  private typealias Chat = HybridChatProcess
  private static let file = "tiny-random-llama.gguf"
  /// The server, started once for the class: each test names repositories of its own.
  private static let server = Mutex<Result<HubServerProcess, HubUnavailable>?>(nil)

  private struct HubUnavailable: Error {
    var message: String
  }

  /// A temporary home for one test's downloads: the hub cache, the store
  /// and an empty HF_HOME (no token file of the machine's).
  private let root = FileManager.default.temporaryDirectory.appendingPathComponent(
    "chat-download-\(UUID().uuidString)")

  override class func setUp() {
    super.setUp()
    let model = URL(fileURLWithPath: Chat.tinyModel)
    let started: Result<HubServerProcess, HubUnavailable>
    if FileManager.default.fileExists(atPath: model.path) {
      do {
        started = .success(try HubServerProcess(file: model, token: "hf_chat_test_token"))
      } catch {
        started = .failure(HubUnavailable(message: "python3 for the loopback hub server (\(error))"))
      }
    } else {
      started = .failure(HubUnavailable(message: "the tiny test model at \(model.path) (run make test)"))
    }
    server.withLock { $0 = started }
  }

  override class func tearDown() {
    server.withLock { server in
      if case .success(let hub)? = server { hub.stop() }
      server = nil
    }
    super.tearDown()
  }

  override func setUpWithError() throws {
    try Chat.requireBinary()
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: root)
  }

  private func hub(file: StaticString = #filePath, line: UInt = #line) throws -> HubServerProcess {
    switch Self.server.withLock({ $0 }) {
    case .success(let hub)?: return hub
    case .failure(let unavailable)?: throw Prerequisite.missing(unavailable.message, file: file, line: line)
    case nil: throw Prerequisite.missing("the hub server was not started", file: file, line: line)
    }
  }

  private var hubCache: URL { root.appendingPathComponent("hub") }
  private var store: URL { root.appendingPathComponent("models") }

  private func environment() throws -> [String: String] {
    [
      "HF_ENDPOINT": try hub().hubURL.absoluteString, "HF_HUB_CACHE": hubCache.path, "HF_TOKEN": "",
      "HF_HOME": root.appendingPathComponent("hf-home").path, "HYBRID_INFERENCE_MODELS": store.path,
    ]
  }

  private static func repository(_ words: String) -> String {
    "test/\(words)-\(UUID().uuidString.prefix(8).lowercased())"
  }

  private func ask(_ model: String, mode: String = "only-on-device") throws -> HybridChatProcess.Result {
    try Chat.run(
      ["--model", model, "--mode", mode, "--max-tokens", "4", "Hi"], environment: try environment(), timeout: 60)
  }

  /// The answer and its report, after the download's two lines.
  private func assertAnswered(
    _ result: HybridChatProcess.Result, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    XCTAssertFalse(result.stdout.isEmpty, "no answer", file: file, line: line)
    XCTAssertTrue(result.stderrLines.last?.hasPrefix("You used: ") == true, result.stderr, file: file, line: line)
  }

  /// The one file in the hub cache's snapshot of `repository`, if any.
  private func snapshotFile(_ repository: String) -> URL? {
    let snapshots = hubCache.appendingPathComponent("models--" + repository.replacingOccurrences(of: "/", with: "--"))
      .appendingPathComponent("snapshots")
    guard let commits = try? FileManager.default.contentsOfDirectory(atPath: snapshots.path), commits.count == 1
    else { return nil }
    return snapshots.appendingPathComponent(commits[0]).appendingPathComponent(Self.file)
  }

  /// The partial file a hub download of `repository` is writing, if any.
  private func partialFile(_ repository: String) -> URL? {
    let blobs = hubCache.appendingPathComponent("models--" + repository.replacingOccurrences(of: "/", with: "--"))
      .appendingPathComponent("blobs")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []
    return names.first { $0.hasSuffix(".partial") }.map { blobs.appendingPathComponent($0) }
  }

  private func size(_ url: URL?) -> Int64 {
    guard let url, let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return 0 }
    return (attributes[.size] as? NSNumber)?.int64Value ?? 0
  }

  private func modelBytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: Chat.tinyModel)) }

  private func sha256(_ data: Data) -> String {
    var hash = SHA256()
    hash.update(data)
    return hash.hexDigest
  }

  func testHubModel_isDownloadedOnce_thenAnswers() throws {
    let repository = Self.repository("plain")
    let model = "hf:\(repository)/\(Self.file)"
    let first = try ask(model)
    assertAnswered(first)
    let size = ByteCount.text(Int64(try modelBytes().count))
    XCTAssertEqual(first.stderrLines.first, "hybrid-chat: downloading \(model)@main (\(size))", first.stderr)
    XCTAssertTrue(first.stderr.contains("hybrid-chat: downloaded \(Self.file): "), first.stderr)
    let file = try XCTUnwrap(snapshotFile(repository), "no snapshot in \(hubCache.path)")
    XCTAssertEqual(try Data(contentsOf: file), try modelBytes())

    // On disk now: the second run goes straight to the answer, with no request.
    let second = try ask(model)
    assertAnswered(second)
    XCTAssertFalse(second.stderr.contains("downloading"), second.stderr)
    let stats = try hub().stats(repository: repository)
    XCTAssertEqual(stats.cdnRequests.filter { $0.method == "GET" }.count, 1)
  }

  func testCtrlC_keepsThePartialFile_andTheNextRunResumesWithRange() throws {
    let repository = Self.repository("slow")
    let model = "hf:\(repository)/\(Self.file)"
    let total = Int64(try modelBytes().count)
    let running = try Chat.start(
      ["--model", model, "--mode", "only-on-device", "--max-tokens", "4", "Hi"], environment: try environment())
    // The slow CDN sends 64 KiB every 100 ms: interrupt once the first chunk is on disk.
    let deadline = Date().addingTimeInterval(30)
    var seen: Int64 = 0
    while running.process.isRunning, Date() < deadline {
      seen = size(partialFile(repository))
      if seen >= 64 * 1024 { break }
      usleep(2_000)
    }
    XCTAssertTrue(running.process.isRunning, "the download ended before it could be interrupted")
    XCTAssertLessThan(seen, total, "the whole file came before the interrupt")
    running.signal(SIGINT)
    let interrupted = try running.wait(timeout: 30)
    XCTAssertEqual(interrupted.status, 130, interrupted.stderr)
    XCTAssertEqual(interrupted.stdout, "")
    XCTAssertEqual(
      interrupted.stderrLines.last,
      "hybrid-chat: the download was interrupted; run the same command again to resume it", interrupted.stderr)
    XCTAssertFalse(interrupted.stderr.contains("error:"), interrupted.stderr)
    let kept = size(partialFile(repository))
    XCTAssertGreaterThanOrEqual(kept, seen, "the partial file was not kept")
    XCTAssertLessThan(kept, total)
    XCTAssertNil(snapshotFile(repository), "an interrupted download published a file")

    let resumed = try ask(model)
    assertAnswered(resumed)
    XCTAssertTrue(resumed.stderr.contains("resuming at"), resumed.stderr)
    XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(snapshotFile(repository))), try modelBytes())
    let gets = try hub().stats(repository: repository).cdnRequests.filter { $0.method == "GET" }
    XCTAssertEqual(gets.count, 2, "\(gets)")
    XCTAssertNil(gets.first?.range)
    XCTAssertEqual(gets.last?.range, "bytes=\(kept)-")
    XCTAssertEqual(gets.last?.status, 206)
  }

  func testPinnedURL_overLoopbackHTTP_isDownloadedIntoTheStore() throws {
    let name = "plain-\(UUID().uuidString.prefix(8).lowercased())"
    let digest = sha256(try modelBytes())
    let url = try hub().fileURL(name: name, filename: Self.file)
    let result = try ask(url.absoluteString + "#sha256=" + digest)
    assertAnswered(result)
    let file = store.appendingPathComponent(digest).appendingPathComponent(Self.file)
    XCTAssertEqual(try Data(contentsOf: file), try modelBytes())
    let gets = try hub().stats(repository: "files/\(name)").cdnRequests.filter { $0.method == "GET" }
    XCTAssertEqual(gets.map(\.path), ["/files/\(name)/\(Self.file)"], "the pin is not sent")
  }

  func testWrongPin_isAChecksumErrorLine() throws {
    let name = "plain-\(UUID().uuidString.prefix(8).lowercased())"
    let wrong = String(repeating: "0", count: 64)
    let url = try hub().fileURL(name: name, filename: Self.file)
    let result = try ask(url.absoluteString + "#sha256=" + wrong)
    XCTAssertEqual(result.status, 1, result.stderr)
    XCTAssertEqual(result.stdout, "")
    let errors = result.stderrLines.filter { $0.hasPrefix("hybrid-chat: error: ") }
    XCTAssertEqual(errors.count, 1, result.stderr)
    XCTAssertTrue(
      errors.first?.contains("SHA-256 is \(sha256(try modelBytes())), not the expected \(wrong)") == true, result.stderr
    )
    XCTAssertEqual(result.stderrLines.last, errors.first)
  }

  func testMissingRepository_isADownloadErrorLine() throws {
    let result = try ask("hf:\(Self.repository("missing"))/\(Self.file)")
    XCTAssertEqual(result.status, 1, result.stderr)
    XCTAssertEqual(result.stdout, "")
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    XCTAssertTrue(result.stderr.hasPrefix("hybrid-chat: error: the model download from "), result.stderr)
    XCTAssertTrue(result.stderr.contains("(HTTP 404)"), result.stderr)
    XCTAssertTrue(result.stderr.contains("check the repository, the file and the revision"), result.stderr)
  }

  /// The library refuses plain http off this machine before any request; the command reports it.
  func testPlainHTTPToAnotherMachine_isRefused() throws {
    let result = try ask("http://203.0.113.5/m.gguf#sha256=" + String(repeating: "a", count: 64))
    XCTAssertEqual(result.status, 1, result.stderr)
    XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
    XCTAssertTrue(
      result.stderr.hasPrefix("hybrid-chat: error: the --model source cannot be downloaded: "), result.stderr)
    XCTAssertTrue(result.stderr.contains("not https"), result.stderr)
  }

  /// only-cloud never uses the device, so it fetches nothing.
  func testOnlyCloud_downloadsNothing() throws {
    let repository = Self.repository("plain")
    let result = try ask("hf:\(repository)/\(Self.file)", mode: "only-cloud")
    XCTAssertEqual(result.status, 1, result.stderr)
    XCTAssertTrue(result.stderr.contains("GEMINI_API_KEY"), result.stderr)
    let stats = try hub().stats(repository: repository)
    XCTAssertEqual(stats.hubRequests.count + stats.cdnRequests.count, 0)
    XCTAssertFalse(FileManager.default.fileExists(atPath: hubCache.path))
  }
}
