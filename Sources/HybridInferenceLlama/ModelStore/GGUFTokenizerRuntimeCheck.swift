import HybridInferenceCore
import HybridInferenceJinja

/// What tokenizing a prompt needs from the vocabulary, against
/// `llama_vocab::impl::tokenize` (src/llama-vocab.cpp) in the pinned llama.cpp.
///
/// `GGUFVocabularyCheck` keeps the loader from failing; this keeps the first
/// request from ending the process later. llama.cpp's tokenizers can throw a C++
/// exception or assert at run time, long after the file loaded, and an
/// exception unwinding through Swift terminates the process just like an
/// assert. The library tokenizes every prompt with `add_special` (for its
/// first segment), so these are reachable:
/// - SentencePiece (`llama`) spells a character it has no token for byte by
///   byte and throws `std::out_of_range` for a byte with neither `<0xHH>` nor
///   a one-byte token (`ByteTokenSet`).
/// - T5's Unigram (`t5`) walks the precompiled charsmap, which can throw
///   (`GGUFCharsmapCheck`).
/// - `GGML_ASSERT`s that the beginning, end or separator token exists whenever
///   the vocabulary asks for it to be added (BERT's WordPiece always does).
///
/// Not needed: byte-level BPE (`gpt2`) looks bytes up with `text_to_token` and
/// silently drops one it lacks; token-to-piece reads a table llama.cpp builds
/// at load for every id in the vocabulary (sampled ids always are), and the
/// other tokenizers have no throwing lookups.
enum GGUFTokenizerRuntimeCheck {
  static func validate(_ file: GGUFFile, model: String, vocabularySize: Int) throws(GGUFProblem) {
    if model == "llama" {
      try checkByteFallback(file)
    }
    if model == "t5", let charsmap = file.metadata["tokenizer.ggml.precompiled_charsmap"]?.array?.bytes {
      try GGUFCharsmapCheck.validate(charsmap)
    }
    for added in addedTokens(file, model: model) {
      let key = "tokenizer.ggml.\(added.name)_token_id"
      let explicit = file.metadata[key]?.integer  // in range: GGUFVocabularyCheck
      guard explicit == nil, added.defaultID.map({ $0 >= vocabularySize }) ?? true else { continue }
      throw GGUFProblem(
        reason: "the tokenizer adds a \(added.name) token to every prompt but \(key) is missing "
          + "and llama.cpp has no default for it in a vocabulary of \(vocabularySize) tokens")
    }
  }

  /// Every byte that can occur in UTF-8 text (Swift strings are always valid
  /// UTF-8, so never 0xC0, 0xC1 or 0xF5...0xFF) must have a token.
  private static func checkByteFallback(_ file: GGUFFile) throws(GGUFProblem) {
    guard let byteTokens = file.metadata["tokenizer.ggml.tokens"]?.array?.byteTokens else { return }
    let utf8Bytes = (0...0xF4).filter { $0 != 0xC0 && $0 != 0xC1 }.map(UInt8.init)
    let missing = utf8Bytes.filter { !byteTokens.contains($0) }
    guard let first = missing.first else { return }
    let hex = "0x" + String(first, radix: 16, uppercase: true).leftPadded(to: 2)
    throw GGUFProblem(
      reason: "the SentencePiece vocabulary has no token for byte \(hex) (neither <\(hex)> nor the byte itself) "
        + "and \(missing.count - 1) more: llama.cpp's byte fallback would throw on text containing it")
  }

  /// A special token that `tokenize(add_special: true)` adds, and the id
  /// llama.cpp falls back to when the file names none (nil: none).
  private struct Added {
    var name: String
    var defaultID: Int?
  }

  /// The special tokens the tokenizer adds, from `tokenizer.ggml.add_*_token`
  /// or llama.cpp's default for the tokenizer (`load`, `impl::tokenize`). A
  /// byte-level BPE's default depends on its pre-tokenizer; taken as adding.
  private static func addedTokens(_ file: GGUFFile, model: String) -> [Added] {
    func adds(_ name: String, default value: Bool) -> Bool {
      if case .bool(let set)? = file.metadata["tokenizer.ggml.add_\(name)_token"] { return set }
      return value
    }
    var added: [Added] = []
    switch model {
    case "llama":
      if adds("bos", default: true) { added.append(Added(name: "bos", defaultID: 1)) }
      if adds("eos", default: false) { added.append(Added(name: "eos", defaultID: 2)) }
    case "bert":  // WordPiece adds both whatever the flags say
      added = [Added(name: "bos", defaultID: 101), Added(name: "seperator", defaultID: 102)]
    case "t5":
      if adds("bos", default: false) { added.append(Added(name: "bos", defaultID: nil)) }
      if adds("eos", default: true) { added.append(Added(name: "eos", defaultID: 1)) }
    case "gpt2", "hybriddna", "whitespace":
      if adds("bos", default: true) { added.append(Added(name: "bos", defaultID: 11)) }
      if adds("eos", default: false) { added.append(Added(name: "eos", defaultID: 11)) }
    case "gemma4":  // llama.cpp forces add_bos for Gemma 4
      added.append(Added(name: "bos", defaultID: nil))
      if adds("eos", default: false) { added.append(Added(name: "eos", defaultID: nil)) }
    default:
      break
    }
    return added
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
