import HybridInferenceCore
import HybridInferenceJinja

/// T5's precompiled charsmap against `llm_tokenizer_ugm_session::normalize_prefix`
/// (src/llama-vocab.cpp) in the pinned llama.cpp.
///
/// The charsmap is a 4-byte length, a trie packed as a XOR-compressed double
/// array (XCDA) of 32-bit nodes, then NUL-terminated replacement strings.
/// llama.cpp loads it unchecked and walks it on every tokenization, one input
/// byte at a time; a node index past the array, a replacement offset past the
/// strings or a string without its NUL throws `std::runtime_error` there, at
/// run time, where the exception unwinds into Swift and ends the process. So
/// every state the walk can reach, over every byte it can read (1...255; a 0
/// stops it), is visited here once: states are node-derived, so there are at
/// most as many as nodes. A dense trie of 262,144 nodes (1 MiB, the cap) takes
/// 0.4 s in a debug build; T5's own charsmap is about a quarter of that.
enum GGUFCharsmapCheck {
  /// About four times T5's own charsmap, and a bound on the walk's time.
  static let maximumTrieBytes = 1 << 20

  static func validate(_ charsmap: [UInt8]) throws(GGUFProblem) {
    // Shorter than its own length field, or a length past the end: llama.cpp's
    // loader throws, which fails the load cleanly. Refused all the same.
    guard charsmap.count >= 4 else {
      throw GGUFProblem(reason: "tokenizer.ggml.precompiled_charsmap is \(charsmap.count) bytes, too short")
    }
    let blobSize = Int(read32(charsmap, at: 0))
    guard blobSize + 4 < charsmap.count else {
      throw GGUFProblem(reason: "tokenizer.ggml.precompiled_charsmap's trie runs past its end")
    }
    // Real ones are a few hundred kilobytes; the walk is linear in the nodes
    // times 255, so a crafted giant could stall the availability check.
    guard blobSize <= maximumTrieBytes else {
      throw GGUFProblem(
        reason: "tokenizer.ggml.precompiled_charsmap's trie is \(blobSize) bytes, over \(maximumTrieBytes)")
    }
    let nodes = (0..<blobSize / 4).map { read32(charsmap, at: 4 + $0 * 4) }
    guard !nodes.isEmpty else { return }  // llama.cpp skips the walk
    let strings = charsmap[(4 + blobSize)...]
    try walk(nodes: nodes, strings: Array(strings))
  }

  private static func walk(nodes: [UInt32], strings: [UInt8]) throws(GGUFProblem) {
    func problem(_ what: String) -> GGUFProblem {
      GGUFProblem(reason: "tokenizer.ggml.precompiled_charsmap is corrupt (\(what)): tokenizing would throw")
    }
    // The NUL at or after each offset, so each replacement is checked in O(1).
    var terminated = [Bool](repeating: false, count: strings.count)
    var seenNul = false
    for index in strings.indices.reversed() {
      seenNul = seenNul || strings[index] == 0
      terminated[index] = seenNul
    }
    var pending = [base(nodes[0])]
    var visited: Set<UInt32> = [pending[0]]
    while let state = pending.popLast() {
      for byte in UInt32(1)...255 {
        let child = state ^ byte
        guard child < nodes.count else { throw problem("node \(child) of \(nodes.count)") }
        let node = nodes[Int(child)]
        guard node & (1 << 31 | 0xff) == byte else { continue }  // not a child: the walk stops
        let next = child ^ base(node)
        if (node >> 8) & 1 == 1 {  // a leaf: `next` holds the replacement's offset
          guard next < nodes.count else { throw problem("value node \(next) of \(nodes.count)") }
          let offset = Int(nodes[Int(next)] & (1 << 31 - 1))
          guard offset < strings.count, terminated[offset] else {
            throw problem("replacement at \(offset) of \(strings.count) bytes")
          }
        }
        if visited.insert(next).inserted { pending.append(next) }
      }
    }
  }

  /// `xcda_array_view::get_base`: bits 10-30, shifted left by 8 when bit 9 is set.
  private static func base(_ node: UInt32) -> UInt32 {
    (node >> 10) &<< ((node & (1 << 9)) >> 6)
  }

  private static func read32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    (0..<4).reduce(0) { value, index in value | UInt32(bytes[offset + index]) << (8 * index) }
  }
}
