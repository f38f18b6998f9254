import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// `GGUFCharsmapCheck` on hand-built tries: the crafted-file test covers one
/// broken trie end to end; these cover each way a walk can leave the charsmap.
final class CharsmapCheckTests: XCTestCase {
  /// A trie of 512 nodes that maps "a" to the replacement at `offset`:
  /// the root's children are nodes 1...255, "a"'s node is a leaf whose
  /// value sits in node 256, and node 256's children are 257...511.
  private func charsmap(offset: UInt32 = 0, strings: [UInt8] = Array("b\0".utf8), nodeCount: Int = 512) -> [UInt8] {
    var nodes = [UInt32](repeating: 0, count: nodeCount)
    let a = UInt32(UInt8(ascii: "a"))
    if nodeCount > 256 {
      nodes[Int(a)] = ((a ^ 256) << 10) | (1 << 8) | a  // base, leaf, lcheck
      nodes[256] = offset
    }
    let blob = nodes.flatMap { node in (0..<4).map { UInt8(truncatingIfNeeded: node >> (8 * $0)) } }
    let size = UInt32(blob.count)
    return (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + blob + strings
  }

  private func assertRefused(_ bytes: [UInt8], _ fragment: String, line: UInt = #line) {
    XCTAssertThrowsError(try GGUFCharsmapCheck.validate(bytes), line: line) { error in
      let reason = (error as? GGUFProblem)?.reason ?? "\(error)"
      XCTAssertTrue(reason.contains(fragment), reason, line: line)
    }
  }

  func testSoundTrie_passes() throws {
    try GGUFCharsmapCheck.validate(charsmap())
  }

  func testNodePastTheArray_isRefused() {
    assertRefused(charsmap(nodeCount: 16), "node 16 of 16")
  }

  func testReplacementPastTheStrings_isRefused() {
    assertRefused(charsmap(offset: 9), "replacement at 9 of 2 bytes")
  }

  func testReplacementWithoutItsNUL_isRefused() {
    assertRefused(charsmap(strings: Array("b".utf8)), "replacement at 0 of 1 bytes")
  }

  func testLengthPastTheEnd_isRefused() {
    assertRefused([0xFF, 0xFF, 0, 0, 1, 2, 3], "runs past its end")
    assertRefused([1, 2], "too short")
  }

  func testTrieOverTheCap_isRefusedWithoutWalking() {
    let size = UInt32(GGUFCharsmapCheck.maximumTrieBytes + 4)
    let bytes =
      (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + [UInt8](repeating: 0, count: Int(size) + 1)
    assertRefused(bytes, "over \(GGUFCharsmapCheck.maximumTrieBytes)")
  }
}
