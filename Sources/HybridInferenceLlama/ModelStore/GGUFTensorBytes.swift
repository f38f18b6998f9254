/// The bytes of a GGUF file's weights, by the layer llama.cpp places them
/// in: each block (`blk.N.*`), the output layer, and the token embeddings,
/// which llama.cpp always keeps on the CPU (`OffloadPlan`).
///
/// Each size is one tensor's, already checked against the file's length by
/// `GGUFParser`; sums saturate at `Int.max`, and block numbers past
/// `maximumBlock` are not kept, so a forged table cannot grow the record.
struct GGUFTensorBytes: Sendable, Equatable {
  /// Each block's tensors, by block number.
  var blocks: [Int: Int] = [:]
  /// `output.*` and `output_norm.*`.
  var output = 0
  /// `token_embd.weight`.
  var tokenEmbedding = 0
  /// Whether the file has an `output.weight` of its own; without one,
  /// llama.cpp makes the output projection from the token embeddings, and
  /// a copy of them goes wherever the output layer goes.
  var hasOutputWeight = false

  /// The highest block number kept: past llama.cpp's `LLAMA_MAX_LAYERS` (512).
  static let maximumBlock = 4096

  /// Counts one tensor.
  mutating func add(name: String, bytes: Int) {
    if let block = Self.blockNumber(of: name) {
      blocks[block] = OffloadPlan.sum([blocks[block] ?? 0, bytes])
    } else if name.hasPrefix("output.") || name.hasPrefix("output_norm.") {
      output = OffloadPlan.sum([output, bytes])
      if name == "output.weight" { hasOutputWeight = true }
    } else if name == "token_embd.weight" {
      tokenEmbedding = bytes
    }
  }

  /// The output layer's weights as llama.cpp loads them onto its device.
  var outputLayer: Int { hasOutputWeight ? output : OffloadPlan.sum([output, tokenEmbedding]) }

  /// The bytes of blocks `0..<count`, block 0 first (0 for one the file lacks).
  func blockBytes(count: Int) -> [Int] {
    (0..<min(max(0, count), Self.maximumBlock + 1)).map { blocks[$0] ?? 0 }
  }

  /// The block count the tensor names imply: one past the highest number.
  var impliedBlockCount: Int { blocks.keys.max().map { $0 + 1 } ?? 0 }

  /// N in `blk.N.`; nil for another name, or a number past `maximumBlock`.
  static func blockNumber(of name: String) -> Int? {
    guard name.hasPrefix("blk.") else { return nil }
    let digits = name.utf8.dropFirst(4).prefix { $0 != UInt8(ascii: ".") }
    guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    let number = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    return number <= maximumBlock ? number : nil
  }
}
