import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore

/// SHA-256 against the standard's vectors, against itself split anywhere,
/// and against Python's hashlib (OpenSSL, an implementation of its own) on
/// random inputs of every length around the block and padding boundaries.
final class SHA256Tests: XCTestCase {
  private func digest(_ bytes: [UInt8]) -> String {
    var hash = SHA256()
    hash.update(bytes)
    return hash.hexDigest
  }

  /// FIPS 180-4's examples and the first SHA256ShortMsg.rsp vectors (CAVP).
  func testStandardVectors() {
    let vectors: [(message: [UInt8], digest: String)] = [
      (Array("".utf8), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      (
        Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
      (
        Array(
          ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
            + "nopqrstu").utf8),
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
      ),
      ([0xd3], "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1"),
      ([0x11, 0xaf], "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98"),
      ([0xb4, 0x19, 0x0e], "dff2e73091f6c05e528896c4c831b9448653dc2ff043528f6769437bc7b975c2"),
      ([0x74, 0xba, 0x25, 0x21], "b16aa56be3880d18cd41e68384cf1ec8c17680c45a02b1575dc1518923ae8b0e"),
    ]
    for (message, expected) in vectors {
      XCTAssertEqual(digest(message), expected, "message of \(message.count) bytes")
    }
  }

  /// One million "a": at once, a byte at a time for the first 1,000, then in
  /// 1,000-byte pieces.
  func testOneMillionA() {
    let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
    let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    XCTAssertEqual(digest(million), expected)
    var pieces = SHA256()
    for _ in 0..<1000 { pieces.update([UInt8(ascii: "a")]) }
    for _ in 1..<1000 { pieces.update(Data(million[0..<1000])) }
    XCTAssertEqual(pieces.hexDigest, expected)
  }

  /// Every split of a 200-byte input into two updates gives the digest of
  /// the whole, and so does a split into three at every second pair of points.
  func testEverySplitGivesTheSameDigest() {
    var generator = SplitMix(seed: 200)
    let input = (0..<200).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    let whole = digest(input)
    for cut in 0...input.count {
      var hash = SHA256()
      hash.update(Array(input[..<cut]))
      hash.update(Array(input[cut...]))
      XCTAssertEqual(hash.hexDigest, whole, "split at \(cut)")
    }
    for first in stride(from: 0, through: input.count, by: 7) {
      for second in stride(from: first, through: input.count, by: 11) {
        var hash = SHA256()
        hash.update(Array(input[..<first]))
        hash.update(Array(input[first..<second]))
        hash.update(Array(input[second...]))
        XCTAssertEqual(hash.hexDigest, whole, "split at \(first) and \(second)")
      }
    }
  }

  /// `finalize()` works on a copy: the hash goes on taking bytes after it.
  func testFinalizeLeavesTheHashUsable() {
    var hash = SHA256()
    hash.update(Array("ab".utf8))
    XCTAssertEqual(hash.hexDigest, "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603")
    hash.update(Array("c".utf8))
    XCTAssertEqual(hash.hexDigest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    XCTAssertEqual(hash.finalize().count, 32)
    XCTAssertEqual(SHA256.hex(of: [0x00, 0x0f, 0xa0, 0xff]), "000fa0ff")
  }

  /// Random inputs of every length from 0 to 300 bytes (each padding case:
  /// the length fits in the last block or needs one more), and one of a few
  /// MiB fed in uneven pieces, against Python's hashlib.
  func testRandomInputsAgreeWithHashlib() throws {
    var generator = SplitMix(seed: 0x5348_4132)
    var inputs = (0...300).map { length in (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
    inputs.append((0..<(3 << 20) + 77).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    let expected = try hashlibDigests(of: inputs)
    XCTAssertEqual(expected.count, inputs.count)
    for (input, reference) in zip(inputs, expected) {
      XCTAssertEqual(digest(input), reference, "random input of \(input.count) bytes")
    }
    guard let large = inputs.last else { return }
    var pieces = SHA256()
    var start = 0
    var size = 1
    while start < large.count {
      let end = min(start + size, large.count)
      large[start..<end].withUnsafeBytes { pieces.update($0) }
      start = end
      size = size * 3 + 1  // 1, 4, 13, 40, ...: every offset modulo 64 somewhere
      if size > 1 << 20 { size = 63 }
    }
    XCTAssertEqual(pieces.hexDigest, expected.last)
  }

  /// Each input's hexadecimal digest from `python3 -c hashlib`, in order. The
  /// inputs go through a file: a file of lengths, one a line, and one of the
  /// bytes back to back.
  private func hashlibDigests(of inputs: [[UInt8]]) throws -> [String] {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sha256-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let bytes = directory.appendingPathComponent("bytes")
    let lengths = directory.appendingPathComponent("lengths")
    try Data(inputs.joined()).write(to: bytes)
    try Data(inputs.map { "\($0.count)\n" }.joined().utf8).write(to: lengths)
    let script = """
      import hashlib, sys
      data = open(sys.argv[1], 'rb').read()
      at = 0
      for line in open(sys.argv[2]):
          n = int(line)
          print(hashlib.sha256(data[at:at + n]).hexdigest())
          at += n
      """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script, bytes.path, lengths.path]
    let output = Pipe()
    process.standardOutput = output
    do {
      try process.run()
    } catch {
      throw Prerequisite.missing("python3, for hashlib's digests: \(error)")
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw Prerequisite.missing("python3 with hashlib (exit status \(process.terminationStatus))")
    }
    return text.split(separator: "\n").map(String.init)
  }
}

/// A seeded generator (SplitMix64), so that a failing input is the same on
/// every run.
private struct SplitMix {
  var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var z = state
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }
}
