import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// Follows a byte stream and says whether each next byte keeps it well-formed
/// UTF-8 (Unicode Table 3-7: no overlong forms, no surrogates, nothing above
/// U+10FFFF, continuation bytes only where a sequence expects them).
///
/// Why constrained generation needs it: llama.cpp's grammar engine decodes a
/// token's bytes leniently. It reads a lead byte's length and then takes the
/// low six bits of whatever bytes follow, without checking that they are
/// continuation bytes, and it accepts leads 0xF5-0xF7 and surrogates. So
/// bytes that are not UTF-8 (common from a small or random-weight model) pass
/// as one "character" of a string, while Swift, like any strict decoder,
/// replaces each ill-formed part with its own U+FFFD. A `maxLength` the
/// grammar enforced then counts more characters on our side, and a lead
/// byte can even swallow the closing quote. Refusing such tokens keeps the
/// two counts equal and every answer valid UTF-8.
struct UTF8Validator: Equatable {
  /// Continuation bytes still expected by the sequence in progress.
  private var remaining = 0
  /// The range the next continuation byte must fall in (narrower after
  /// E0, ED, F0 and F4).
  private var lower: UInt8 = 0x80
  private var upper: UInt8 = 0xBF

  /// True between sequences: the text so far decodes completely.
  var isAtBoundary: Bool { remaining == 0 }

  /// Takes `byte`; false (and unchanged meaning) when it would be ill-formed.
  mutating func feed(_ byte: UInt8) -> Bool {
    if remaining > 0 {
      guard byte >= lower, byte <= upper else { return false }
      remaining -= 1
      (lower, upper) = (0x80, 0xBF)
      return true
    }
    switch byte {
    case 0x00...0x7F: return true
    case 0xC2...0xDF: remaining = 1
    case 0xE0: (remaining, lower) = (2, 0xA0)
    case 0xE1...0xEC, 0xEE...0xEF: remaining = 2
    case 0xED: (remaining, upper) = (2, 0x9F)
    case 0xF0: (remaining, lower) = (3, 0x90)
    case 0xF1...0xF3: remaining = 3
    case 0xF4: (remaining, upper) = (3, 0x8F)
    default: return false
    }
    return true
  }

  /// The state after `bytes`, or nil if they do not continue well-formed.
  func after<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UTF8Validator? {
    var next = self
    for byte in bytes where !next.feed(byte) { return nil }
    return next
  }
}

/// Every token's bytes in one buffer, read once per model, so a sampler can
/// check a candidate's UTF-8 without calling into llama.cpp.
final class VocabularyBytes: Sendable {
  private let bytes: [UInt8]
  private let starts: [Int]
  /// Tokens whose bytes are complete UTF-8 on their own: after a boundary
  /// they need no further check (almost the whole vocabulary).
  private let isWhole: [Bool]

  init(model: LlamaModel) {
    let count = Int(llama_vocab_n_tokens(model.vocab))
    var bytes: [UInt8] = []
    var starts = [0]
    var isWhole: [Bool] = []
    starts.reserveCapacity(count + 1)
    isWhole.reserveCapacity(count)
    for token in 0..<count {
      let piece = model.piece(of: llama_token(token))
      bytes.append(contentsOf: piece)
      starts.append(bytes.count)
      isWhole.append(UTF8Validator().after(piece)?.isAtBoundary ?? false)
    }
    self.bytes = bytes
    self.starts = starts
    self.isWhole = isWhole
  }

  /// The bytes of `token` (empty outside the vocabulary, and for control tokens).
  func bytes(of token: llama_token) -> ArraySlice<UInt8> {
    let index = Int(token)
    guard index >= 0, index < isWhole.count else { return [] }
    return bytes[starts[index]..<starts[index + 1]]
  }

  /// The UTF-8 state after `token` follows `state`, or nil if its bytes
  /// would make the text ill-formed. A token outside the vocabulary is nil.
  func state(after token: llama_token, from state: UTF8Validator) -> UTF8Validator? {
    let index = Int(token)
    guard index >= 0, index < isWhole.count else { return nil }
    if state.isAtBoundary, isWhole[index] { return state }
    return state.after(bytes[starts[index]..<starts[index + 1]])
  }
}
