import HybridInferenceCore
import HybridInferenceJinja

/// Turns token pieces (byte strings) into text without ever splitting a character.
///
/// A token is a run of bytes, and a multi-byte character can straddle two
/// tokens. Decoding each piece on its own would turn both halves into U+FFFD;
/// this decoder holds an incomplete sequence at the end of a piece until the
/// next piece completes it. Bytes that can never form a character still become
/// U+FFFD, as in any lenient UTF-8 decoder.
struct UTF8StreamDecoder: Sendable {
  private var pending: [UInt8] = []

  /// Adds `bytes` and returns the text that is now complete.
  mutating func decode(_ bytes: some Sequence<UInt8>) -> String {
    pending.append(contentsOf: bytes)
    let completeCount = pending.count - Self.incompleteSuffixLength(pending)
    guard completeCount > 0 else { return "" }
    let text = String(decoding: pending[..<completeCount], as: UTF8.self)
    pending.removeFirst(completeCount)
    return text
  }

  /// Returns whatever is held back; an unfinished character becomes U+FFFD.
  mutating func finish() -> String {
    defer { pending.removeAll() }
    return pending.isEmpty ? "" : String(decoding: pending, as: UTF8.self)
  }

  /// The length of a trailing sequence that has started a character but not
  /// finished it, and could still be finished by more bytes.
  static func incompleteSuffixLength(_ bytes: [UInt8]) -> Int {
    // A character is at most 4 bytes: look back at most 3 for its lead byte.
    var continuationCount = 0
    for byte in bytes.reversed().prefix(4) {
      if byte & 0b1100_0000 == 0b1000_0000 {
        continuationCount += 1
        if continuationCount > 3 { return 0 }
        continue
      }
      let needed: Int
      switch byte {
      case 0xC2...0xDF: needed = 1
      case 0xE0...0xEF: needed = 2
      case 0xF0...0xF4: needed = 3
      default: return 0  // ASCII or a byte that can never lead: nothing to wait for
      }
      return continuationCount < needed ? continuationCount + 1 : 0
    }
    return 0
  }
}
