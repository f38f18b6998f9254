import CLlama
import HybridInferenceCore

extension LlamaModel {
  /// The tokens of `prompt`, as llama-server tokenizes the same prompt: the
  /// BOS (and EOS) the vocabulary adds, once, and the text between.
  ///
  /// A BOS or EOS the template printed where the vocabulary adds one is left
  /// to the vocabulary (`RenderedPrompt.leavingToTokenizer`), as llama.cpp's
  /// chat rendering does: a template writing `{{ bos_token }}` gives one BOS.
  ///
  /// The text between is tokenized whole, control tokens parsed, as
  /// llama-server does, so that the template's text and a message's merge
  /// where they meet (`User: ` then `Hi` is ` Hi`, not ` ` and `Hi`), but only
  /// when that gives the very special tokens, in the same order, as tokenizing
  /// each segment apart: the template's markup with control tokens parsed,
  /// each string of the conversation as plain text (`RenderedPrompt`). A
  /// message holding a marker (`<|im_start|>`), or completing one the
  /// template began, changes them; then the segments' tokens are the prompt,
  /// so a message can never forge a turn.
  func tokenize(_ prompt: RenderedPrompt) throws(HybridInferenceError) -> [llama_token] {
    let (prompt, segmented, bos, eos) = try segments(of: prompt)
    var body = segmented
    if prompt.segments.count > 1 {
      let whole = try tokenize(prompt.text, addSpecial: false, parseSpecial: true)
      if whole.lazy.filter(isSpecial).elementsEqual(segmented.lazy.filter(isSpecial)) { body = whole }
    }
    var tokens: [llama_token] = bos == LLAMA_TOKEN_NULL ? [] : [bos]
    tokens += body
    if eos != LLAMA_TOKEN_NULL { tokens.append(eos) }
    return tokens
  }

  /// The text of `prompt` for a tokenizer that reads it whole with control
  /// tokens parsed and adds the vocabulary's BOS itself (libmtmd's, for a
  /// prompt with images): the template's BOS and EOS left to it.
  ///
  /// - Throws: `unsupportedRequest` when reading it whole gives other
  ///   special tokens than its segments (a message holds a marker such as
  ///   `<|im_start|>`): libmtmd cannot be told to read a message as plain
  ///   text, and a message must never forge a turn.
  func wholeText(of prompt: RenderedPrompt) throws(HybridInferenceError) -> String {
    let (prompt, segmented, _, _) = try segments(of: prompt)
    let whole = try tokenize(prompt.text, addSpecial: false, parseSpecial: true)
    guard whole.lazy.filter(isSpecial).elementsEqual(segmented.lazy.filter(isSpecial)) else {
      throw .unsupportedRequest(
        "a message of a prompt with images holds the model's control tokens; the device reads such a prompt whole")
    }
    return prompt.text
  }

  /// `prompt` with the template's BOS and EOS left to the tokenizer where
  /// the vocabulary adds them itself, its segments' tokens (markup with
  /// control tokens parsed, the conversation's strings as plain text), and
  /// the BOS and EOS the vocabulary adds (`LLAMA_TOKEN_NULL` for none).
  private func segments(of prompt: RenderedPrompt) throws(HybridInferenceError) -> (
    prompt: RenderedPrompt, tokens: [llama_token], bos: llama_token, eos: llama_token
  ) {
    let bos = llama_vocab_get_add_bos(vocab) ? llama_vocab_bos(vocab) : LLAMA_TOKEN_NULL
    let eos = llama_vocab_get_add_eos(vocab) ? llama_vocab_eos(vocab) : LLAMA_TOKEN_NULL
    let prompt = prompt.leavingToTokenizer(
      bos: bos == LLAMA_TOKEN_NULL ? nil : template.bosToken, eos: eos == LLAMA_TOKEN_NULL ? nil : template.eosToken)
    var tokens: [llama_token] = []
    for segment in prompt.segments {
      switch segment {
      case .markup(let text): tokens += try tokenize(text, addSpecial: false, parseSpecial: true)
      case .text(let text): tokens += try tokenize(text, addSpecial: false, parseSpecial: false)
      }
    }
    return (prompt, tokens, bos, eos)
  }

  /// Whether `token` is one llama.cpp's tokenizer matches by its text
  /// rather than by merging: a control, user-defined or unknown token.
  private func isSpecial(_ token: llama_token) -> Bool {
    let special =
      LLAMA_TOKEN_ATTR_CONTROL.rawValue | LLAMA_TOKEN_ATTR_USER_DEFINED.rawValue | LLAMA_TOKEN_ATTR_UNKNOWN.rawValue
    return llama_vocab_get_attr(vocab, token).rawValue & special != 0
  }
}
