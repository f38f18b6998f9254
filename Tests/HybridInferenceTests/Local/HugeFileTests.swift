import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// At every name the library reads its own files from, a huge sparse file
/// (gigabytes long, nothing on disk) with a header that looks right, or a
/// header that declares more than the file holds: each is refused (the
/// prompt cache ignores it, as it does any bad file) before the process's
/// memory grows by more than a few MiB.
final class HugeFileTests: XCTestCase {
  private var directory: URL!
  /// How far the peak resident size may rise while a file is refused.
  private let allowedGrowth = 100 << 20

  override func setUp() {
    directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("huge-files-\(UUID().uuidString)")
  }

  override func tearDown() {
    try? FileManager.default.removeItem(at: directory)
  }

  /// A file at `path` of `size` bytes holding `prefix`, the rest a hole.
  private func sparse(_ path: String, prefix: [UInt8], size: Int) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    XCTAssertGreaterThanOrEqual(descriptor, 0)
    defer { close(descriptor) }
    XCTAssertEqual(prefix.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }, prefix.count)
    XCTAssertEqual(ftruncate(descriptor, off_t(size)), 0)
  }

  /// `header` with its state length set to `stateBytes` and its own checksum made good again.
  private func header(_ header: [UInt8], declaring stateBytes: Int) -> [UInt8] {
    var bytes = header
    withUnsafeBytes(of: UInt64(stateBytes).littleEndian) { bytes.replaceSubrange(32..<40, with: $0) }
    withUnsafeBytes(of: Checksum64.of(bytes.prefix(56)).littleEndian) { bytes.replaceSubrange(56..<64, with: $0) }
    return bytes
  }

  func testHugeOrOverstatedPromptCacheFiles_areRefusedWithoutReadingThem() async throws {
    // A real state, saved by a real turn: its header, tokens and tag.
    let local = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      promptCache: .directory(directory))
    _ = try await PromptCacheTests.answer(
      Transcript(entries: [.prompt("Tell me whether it is sunny in the city by the river, and say nothing else.")]),
      on: local, options: .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: 4)))
    let name = try XCTUnwrap(
      try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix("c.kv") })
    let path = directory.path + "/" + name
    let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    let entry = try XCTUnwrap(PromptCacheFile(name: name))
    let tokenEnd = PromptCacheFile.headerSize + entry.tokenCount * 4
    let prompt = good[PromptCacheFile.headerSize..<tokenEnd].withUnsafeBytes { raw in
      (0..<entry.tokenCount).map {
        llama_token(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self))
      }
    }
    let tag = Array(good[tokenEnd..<(tokenEnd + SequenceStateLayout.tagSize)])
    let goodHeader = Array(good.prefix(PromptCacheFile.headerSize))
    let tokens = Array(good[PromptCacheFile.headerSize..<tokenEnd])
    func load(bound: Int) -> (key: UInt64, tokens: Int, state: [UInt8])? {
      PromptCache.directory(directory, maximumBytes: bound).store.load(
        prompt: prompt, keys: [entry.key], longerThan: 0, tag: tag, log: .silent)
    }
    // The control: the file as saved loads.
    XCTAssertEqual(load(bound: 1 << 30)?.tokens, entry.tokenCount)

    let huge = 2 << 30
    let cases: [(String, [UInt8], Int, Int)] = [
      // Its own header and tokens, then a hole: the header says less than the file holds.
      ("a sparse file under its header", goodHeader + tokens, huge, 4 << 30),
      // A header that says the hole is the state: the cells are read, not the hole.
      ("a sparse state its header declares", header(goodHeader, declaring: huge - tokenEnd) + tokens, huge, 4 << 30),
      // A header declaring gigabytes of state in a file of a few kilobytes.
      ("a header declaring more than the file", header(goodHeader, declaring: 4 << 30) + tokens, good.count, 8 << 30),
      // Larger than the cache may hold.
      ("larger than maximumBytes", good, 8 << 30, 1 << 30),
    ]
    for (label, prefix, size, bound) in cases {
      try sparse(path, prefix: prefix, size: size)
      let (loaded, growth) = await peakResidentGrowth { load(bound: bound) }
      XCTAssertNil(loaded, label)
      XCTAssertLessThan(growth, allowedGrowth, "\(label): the peak resident size rose \(growth >> 20) MiB")
    }
  }

  func testAHugeAttentionDecisionFile_isIgnoredWithoutReadingIt() async throws {
    let key = try AttentionCalibrationStore.Key.test("huge")
    let record = try JSONEncoder().encode(AttentionCalibrationStore.Record(key: key.text, flash: true, reason: "on"))
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent(key.fileName).path
    try sparse(path, prefix: Array(record), size: record.count)
    XCTAssertEqual(AttentionCalibrationStore.stored(key: key, directory: directory)?.flash, true)
    // The same record, then a hole of 8 GiB: not a decision.
    try sparse(path, prefix: Array(record), size: 8 << 30)
    let (stored, growth) = await peakResidentGrowth {
      AttentionCalibrationStore.stored(key: key, directory: directory)
    }
    XCTAssertNil(stored)
    XCTAssertLessThan(growth, allowedGrowth, "the peak resident size rose \(growth >> 20) MiB")
  }
}
