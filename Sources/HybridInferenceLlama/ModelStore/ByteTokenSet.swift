import HybridInferenceCore
import HybridInferenceJinja

/// Which of the 256 byte values a vocabulary can spell as a single token.
///
/// llama.cpp's SentencePiece tokenizer spells a character it has no token for
/// byte by byte (`llama_vocab::byte_to_token`): it looks up `<0xHH>` (upper-case
/// hex), then the one-byte string, and with neither it throws
/// `std::out_of_range` from `token_to_id.at`, which no caller catches: the C++
/// exception unwinds into Swift and ends the process. Collected while the token
/// list is scanned, so the check needs no second pass over a large vocabulary.
struct ByteTokenSet: Sendable, Equatable {
  private var spelled = [Bool](repeating: false, count: 256)

  /// Notes `token` if it is `<0xHH>` or a single byte.
  mutating func insert(token: UnsafeRawBufferPointer) {
    if token.count == 1 {
      spelled[Int(token[0])] = true
    } else if token.count == 6, token[0] == UInt8(ascii: "<"), token[1] == UInt8(ascii: "0"),
      token[2] == UInt8(ascii: "x"), token[5] == UInt8(ascii: ">"),
      let high = Self.upperHexDigit(token[3]), let low = Self.upperHexDigit(token[4])
    {
      spelled[high << 4 | low] = true
    }
  }

  func contains(_ byte: UInt8) -> Bool { spelled[Int(byte)] }

  /// llama.cpp writes the hex digits with "0123456789ABCDEF": `<0x0a>` is not found.
  private static func upperHexDigit(_ character: UInt8) -> Int? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(character - UInt8(ascii: "0"))
    case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(character - UInt8(ascii: "A")) + 10
    default: nil
    }
  }
}
