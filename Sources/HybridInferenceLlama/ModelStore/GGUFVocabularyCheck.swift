import HybridInferenceCore
import HybridInferenceJinja

/// The vocabulary against `llama_vocab::impl::load` (src/llama-vocab.cpp) in the
/// pinned llama.cpp.
///
/// A token string that occurs twice ends the process there
/// (`GGML_ASSERT(id_to_token.size() == token_to_id.size())`). Scores or token
/// types shorter than the token list, and an unknown tokenizer, are exceptions in
/// llama.cpp; a special-token id past the vocabulary only logs a warning and
/// falls back to a default id, which in anything but a SentencePiece llama vocab
/// is an arbitrary token (the end of generation would be misread). All are the
/// signs of a broken conversion, and all are refused here with the exact reason.
/// What the tokenizer needs at run time is `GGUFTokenizerRuntimeCheck`'s.
enum GGUFVocabularyCheck {
  /// The `tokenizer.ggml.model` values llama.cpp implements.
  static let tokenizerModels: Set<String> = [
    "no_vocab", "none", "llama", "bert", "gpt2", "hybriddna", "whitespace", "t5", "rwkv", "test", "plamo2", "gemma4",
  ]

  /// Every special-token id llama.cpp reads (`special_token_types` in `load`).
  static let specialTokenKeys = [
    "bos_token_id", "eos_token_id", "eot_token_id", "eom_token_id", "unknown_token_id", "seperator_token_id",
    "padding_token_id", "cls_token_id", "mask_token_id", "fim_pre_token_id", "fim_suf_token_id",
    "fim_mid_token_id", "fim_pad_token_id", "fim_rep_token_id", "fim_sep_token_id", "prefix_token_id",
    "suffix_token_id", "middle_token_id",
  ].map { "tokenizer.ggml.\($0)" }

  /// Validates the vocabulary; returns its size (0 for a model without one).
  static func validate(_ file: GGUFFile) throws(GGUFProblem) -> Int {
    guard let model = file.metadata["tokenizer.ggml.model"]?.string else {
      throw GGUFProblem(reason: "tokenizer.ggml.model is missing: the file has no tokenizer")
    }
    guard tokenizerModels.contains(model) else {
      throw GGUFProblem(reason: "unknown tokenizer '\(model.prefix(40))' in tokenizer.ggml.model")
    }
    if model == "none" || model == "no_vocab" { return 0 }
    guard let tokens = file.metadata["tokenizer.ggml.tokens"]?.array, tokens.elementType == 8 else {
      throw GGUFProblem(reason: "tokenizer.ggml.tokens is missing or is not a list of strings")
    }
    guard tokens.count > 0, tokens.count <= Int(Int32.max) else {
      throw GGUFProblem(reason: "tokenizer.ggml.tokens has \(tokens.count) tokens")
    }
    if let duplicate = tokens.firstDuplicate {
      throw GGUFProblem(reason: "tokenizer.ggml.tokens lists the token '\(duplicate.prefix(40))' twice")
    }
    for (key, types) in [("tokenizer.ggml.scores", [5, 6]), ("tokenizer.ggml.token_type", [5])] as [(String, [UInt32])]
    {
      guard let value = file.metadata[key] else { continue }
      guard let array = value.array, types.contains(array.elementType) else {
        throw GGUFProblem(reason: "\(key) is not an array of the right type")
      }
      guard array.count == tokens.count else {
        throw GGUFProblem(reason: "the vocabulary has \(tokens.count) tokens but \(key) has \(array.count) entries")
      }
    }
    for key in specialTokenKeys {
      guard let value = file.metadata[key] else { continue }
      guard let id = value.integer, (0..<tokens.count).contains(id) else {
        throw GGUFProblem(
          reason: "\(key) is \(value.integer.map(String.init) ?? "not a number"), "
            + "outside the vocabulary of \(tokens.count) tokens")
      }
    }
    try GGUFTokenizerRuntimeCheck.validate(file, model: model, vocabularySize: tokens.count)
    return tokens.count
  }
}
