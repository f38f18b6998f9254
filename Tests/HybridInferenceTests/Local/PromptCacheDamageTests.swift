import CLlama
import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// A cache file is input anyone who can write the directory controls: each
/// kind of damage is ignored and logged, the file removed, and the answer is
/// the one decoded without the cache.
final class PromptCacheDamageTests: XCTestCase {
  private let greedy = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))
  private var directory: URL!

  override func setUp() {
    directory = URL(fileURLWithPath: NSTemporaryDirectory())
      .appendingPathComponent("prompt-cache-damage-\(getpid())-\(UUID().uuidString)")
  }

  override func tearDown() {
    try? FileManager.default.removeItem(at: directory)
  }

  private let transcript = Transcript(entries: [
    .prompt("Tell me whether it is sunny in the city by the river, and say nothing else at all, please.")
  ])

  private func answer(_ cache: PromptCache?) async throws -> (text: String, cached: Int, log: [String]) {
    let model = LocalSystemModel(
      modelPath: try LocalTestModels.require(LocalTestModels.tinyPath), contextSize: 512, threads: 2,
      promptCache: cache)
    return try await PromptCacheTests.answer(transcript, on: model, options: greedy)
  }

  /// Rewrites `bytes`' header checksum (and the state's, when `state` is
  /// true) so that only the change under test is wrong.
  private func resealed(_ bytes: [UInt8], state: Bool) -> [UInt8] {
    var bytes = bytes
    func put(_ value: UInt64, at offset: Int) {
      withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) }
    }
    let tokens = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) }
    if state { put(Checksum64.of(bytes[(64 + tokens * 4)...]), at: 48) }
    put(Checksum64.of(bytes.prefix(56)), at: 56)
    return bytes
  }

  func testDamagedTruncatedForeignMismatchedAndForgedFiles_areIgnoredAndLogged() async throws {
    let cache = PromptCache.directory(directory)
    let plain = try await answer(nil)
    let original = try await answer(cache)
    XCTAssertEqual(original.text, plain.text)
    let name = try XCTUnwrap(
      try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix("c.kv") })
    let path = directory.path + "/" + name
    let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    // The file loads as it is (the control: a damaged copy must be what makes the difference).
    let reused = try await answer(cache)
    XCTAssertGreaterThan(reused.cached, 0)
    XCTAssertEqual(reused.text, plain.text)

    let tokens = good.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 24, as: UInt64.self)) }
    let stateStart = 64 + tokens * 4
    var flipped = good
    flipped[flipped.count - 100] ^= 0x40
    var foreign = good
    foreign.replaceSubrange(0..<8, with: Array("GGUF\u{3}\0\0\0".utf8))
    var mismatched = good
    mismatched[16] ^= 1
    var forged = good  // valid checksums, a cell count that is not the file's
    forged[stateStart + 8] = 0xFF
    forged[stateStart + 9] = 0xFF
    var badPosition = good  // valid checksums, a cell at another position
    badPosition[stateStart + 12 + 12] = 7
    let cases: [(String, [UInt8], String)] = [
      ("a flipped bit", flipped, "damaged state"),
      ("truncated", Array(good.prefix(good.count - 4096)), "truncated"),
      ("truncated inside the header", Array(good.prefix(40)), "truncated"),
      ("empty", [], "truncated"),
      ("foreign", foreign, "not a prompt cache file"),
      ("another model", resealed(mismatched, state: false), "another model"),
      ("forged cell count", resealed(forged, state: true), "did not write"),
      ("forged position", resealed(badPosition, state: true), "did not write"),
      ("a later version", resealed(good.enumerated().map { $0.offset == 8 ? 9 : $0.element }, state: false), "version"),
    ]
    for (label, bytes, reason) in cases {
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      let reply = try await answer(cache)
      XCTAssertEqual(reply.cached, 0, "\(label): not loaded")
      XCTAssertEqual(reply.text, plain.text, "\(label): the answer decoded without the cache")
      XCTAssertTrue(
        reply.log.contains { $0.contains("ignored \(name)") && $0.contains(reason) }, "\(label): \(reply.log)")
    }
  }

  func testAFileOfAnotherUserALinkOrNotAFile_isIgnored() async throws {
    let cache = PromptCache.directory(directory)
    let plain = try await answer(cache)
    let name = try XCTUnwrap(
      try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix("c.kv") })
    let path = directory.path + "/" + name
    let good = try Data(contentsOf: URL(fileURLWithPath: path))
    var cases: [(String, () throws -> Void, String)] = [
      (
        "a directory", { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) },
        "not a regular file"
      ),
      (
        "a link to a good copy",
        {
          try good.write(to: URL(fileURLWithPath: path + ".copy"))
          try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".copy")
        }, "cannot be opened"
      ),
    ]
    if geteuid() == 0 {
      cases.append(
        (
          "another user's",
          {
            try good.write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(chown(path, 4242, 4242), 0)
          }, "another user"
        ))
    }
    for (label, make, reason) in cases {
      try? FileManager.default.removeItem(atPath: path)
      try make()
      let reply = try await answer(cache)
      XCTAssertEqual(reply.cached, 0, label)
      XCTAssertEqual(reply.text, plain.text, label)
      XCTAssertTrue(reply.log.contains { $0.contains(reason) }, "\(label): \(reply.log)")
    }
  }
}
