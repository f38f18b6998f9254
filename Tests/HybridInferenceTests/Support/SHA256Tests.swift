import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore

/// SHA-256 against the standard's vectors, against itself split anywhere,
/// and against Python's hashlib on random inputs of every length around the
/// block and padding boundaries: each through OpenSSL (where the process has
/// it) and through the Swift code, which must agree.
final class SHA256Tests: XCTestCase {
  /// Both implementations where the process has OpenSSL, the Swift one alone
  /// elsewhere (`testOpenSSLIsFoundOnLinux` says where that is wrong).
  private let implementations: [SHA256.Implementation] =
    SHA256.preferred == .openSSL ? [.openSSL, .portable] : [.portable]

  private func digest(_ bytes: [UInt8], _ implementation: SHA256.Implementation) -> String {
    var hash = SHA256(implementation: implementation)
    hash.update(bytes)
    return hash.hexDigest
  }

  /// A test process links FoundationNetworking, whose libcurl brings
  /// libcrypto on glibc Linux: there the fast path must be found, or every
  /// download hashes in Swift unnoticed.
  func testOpenSSLIsFoundOnLinux() throws {
    #if os(Linux)
      guard SHA256.preferred == .openSSL else {
        throw Prerequisite.missing("OpenSSL's libcrypto in the process (libcurl built on OpenSSL)")
      }
      XCTAssertEqual(SHA256().implementation, .openSSL)
      XCTAssertEqual(SHA256(implementation: .openSSL).implementation, .openSSL)
    #endif
    XCTAssertEqual(SHA256(implementation: .portable).implementation, .portable)
  }

  /// FIPS 180-4's examples (SHA256 "abc", the 448-bit and 896-bit messages)
  /// and the first SHA256ShortMsg.rsp vectors (CAVP).
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
    for implementation in implementations {
      for (message, expected) in vectors {
        XCTAssertEqual(digest(message, implementation), expected, "\(implementation): \(message.count) bytes")
      }
      // An empty update changes nothing.
      var hash = SHA256(implementation: implementation)
      hash.update([])
      hash.update(Data())
      XCTAssertEqual(hash.hexDigest, vectors[0].digest, "\(implementation)")
    }
  }

  /// One million "a": at once, a byte at a time for the first 1,000, then in
  /// 1,000-byte pieces.
  func testOneMillionA() {
    let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
    let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    for implementation in implementations {
      XCTAssertEqual(digest(million, implementation), expected, "\(implementation)")
      var pieces = SHA256(implementation: implementation)
      for _ in 0..<1000 { pieces.update([UInt8(ascii: "a")]) }
      for _ in 1..<1000 { pieces.update(Data(million[0..<1000])) }
      XCTAssertEqual(pieces.hexDigest, expected, "\(implementation)")
    }
  }

  /// Every split of a 200-byte input into two updates gives the digest of
  /// the whole, and so does a split into three at every second pair of points.
  func testEverySplitGivesTheSameDigest() {
    var generator = SplitMix(seed: 200)
    let input = (0..<200).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    let whole = digest(input, .portable)
    for implementation in implementations {
      XCTAssertEqual(digest(input, implementation), whole, "\(implementation)")
      for cut in 0...input.count {
        var hash = SHA256(implementation: implementation)
        hash.update(Array(input[..<cut]))
        hash.update(Array(input[cut...]))
        XCTAssertEqual(hash.hexDigest, whole, "\(implementation): split at \(cut)")
      }
      for first in stride(from: 0, through: input.count, by: 7) {
        for second in stride(from: first, through: input.count, by: 11) {
          var hash = SHA256(implementation: implementation)
          hash.update(Array(input[..<first]))
          hash.update(Array(input[first..<second]))
          hash.update(Array(input[second...]))
          XCTAssertEqual(hash.hexDigest, whole, "\(implementation): split at \(first) and \(second)")
        }
      }
    }
  }

  /// Both implementations agree on random inputs cut at random points, each
  /// piece given to both.
  func testImplementationsAgreeOnRandomSplits() throws {
    guard implementations.count == 2 else {
      throw Prerequisite.missing("OpenSSL's libcrypto in the process, to compare with")
    }
    var generator = SplitMix(seed: 0x5350_4c49)
    for round in 0..<50 {
      let length = Int(generator.next() % 5000)
      let input = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      var fast = SHA256(implementation: .openSSL)
      var portable = SHA256(implementation: .portable)
      var start = 0
      while start < length {
        let end = min(length, start + Int(generator.next() % 300))
        input[start..<end].withUnsafeBytes {
          fast.update($0)
          portable.update($0)
        }
        start = end
      }
      XCTAssertEqual(fast.finalize().count, 32)
      XCTAssertEqual(fast.hexDigest, portable.hexDigest, "round \(round), \(length) bytes")
    }
  }

  /// `finalize()` works on a copy: the hash goes on taking bytes after it.
  func testFinalizeLeavesTheHashUsable() {
    for implementation in implementations {
      var hash = SHA256(implementation: implementation)
      hash.update(Array("ab".utf8))
      XCTAssertEqual(
        hash.hexDigest, "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603", "\(implementation)")
      hash.update(Array("c".utf8))
      XCTAssertEqual(
        hash.hexDigest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "\(implementation)")
      XCTAssertEqual(hash.finalize().count, 32)
    }
    XCTAssertEqual(SHA256.hex(of: [0x00, 0x0f, 0xa0, 0xff]), "000fa0ff")
  }

  /// A copy taken mid-stream is a value of its own: the original and the
  /// copy each hash what they are given after the copy, and neither sees the
  /// other's bytes, whichever goes on first.
  func testCopyMidStreamGoesOnIndependently() {
    let head = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
    let tails = [Array("first tail".utf8), Array(" and another, longer than one block: ".utf8) + head]
    for implementation in implementations {
      var original = SHA256(implementation: implementation)
      original.update(head)
      var copy = original
      copy.update(tails[1])
      original.update(tails[0])
      XCTAssertEqual(original.hexDigest, digest(head + tails[0], .portable), "\(implementation): original")
      XCTAssertEqual(copy.hexDigest, digest(head + tails[1], .portable), "\(implementation): copy")
      // The copy made first goes on first this time.
      var third = original
      original.update(tails[1])
      XCTAssertEqual(third.hexDigest, digest(head + tails[0], .portable), "\(implementation): untouched copy")
      third.update(tails[0])
      XCTAssertEqual(original.hexDigest, digest(head + tails[0] + tails[1], .portable), "\(implementation)")
      XCTAssertEqual(third.hexDigest, digest(head + tails[0] + tails[0], .portable), "\(implementation)")
    }
  }

  /// One update of 64 MiB (a download's whole buffer at once) gives the
  /// digest of the same bytes in 1 MiB pieces, and hashlib's. The Swift code
  /// takes the first 8 MiB: its loop is the same for any size, and a debug
  /// build runs it at tens of MB/s.
  func testLargeUpdate() throws {
    // 1 MiB of random bytes 64 times, each copy with its number in front,
    // so that no two MiB are alike (a debug build draws 64 MiB slowly).
    var generator = SplitMix(seed: 64)
    let mebibyte = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    var large = [UInt8]()
    large.reserveCapacity(64 << 20)
    for index in 0..<64 {
      large.append(UInt8(index))
      large.append(contentsOf: mebibyte[1...])
    }
    for implementation in implementations {
      let input = implementation == .portable ? Array(large[..<(8 << 20)]) : large
      let expected = try hashlibDigests(of: [input])
      XCTAssertEqual(digest(input, implementation), expected.first, "\(implementation): one update")
      var pieces = SHA256(implementation: implementation)
      for start in stride(from: 0, to: input.count, by: 1 << 20) {
        input[start..<start + (1 << 20)].withUnsafeBytes { pieces.update($0) }
      }
      XCTAssertEqual(pieces.hexDigest, expected.first, "\(implementation): 1 MiB pieces")
    }
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
    guard let large = inputs.last else { return }
    for implementation in implementations {
      for (input, reference) in zip(inputs, expected) {
        XCTAssertEqual(digest(input, implementation), reference, "\(implementation): \(input.count) random bytes")
      }
      var pieces = SHA256(implementation: implementation)
      var start = 0
      var size = 1
      while start < large.count {
        let end = min(start + size, large.count)
        large[start..<end].withUnsafeBytes { pieces.update($0) }
        start = end
        size = size * 3 + 1  // 1, 4, 13, 40, ...: every offset modulo 64 somewhere
        if size > 1 << 20 { size = 63 }
      }
      XCTAssertEqual(pieces.hexDigest, expected.last, "\(implementation)")
    }
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
    var data = Data()
    for input in inputs { data.append(contentsOf: input) }
    try data.write(to: bytes)
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
