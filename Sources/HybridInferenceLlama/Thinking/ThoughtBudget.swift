import CLlama
import HybridInferenceCore

/// The most thought tokens an answer may spend, and the tokens that close
/// its block once they are spent.
///
/// When the answer has spent `tokens` tokens in its block, the scheduler
/// puts `closing` into the sequence in place of sampling: the end tag as the
/// template writes it after a thought (`ThoughtSyntax.closing`), tokenized as the
/// template's own markup (a tag that is one special token stays one), so the
/// model reads a block it closed itself and goes on with the answer.
struct ThoughtBudget: Sendable {
  /// The thought tokens allowed, > 0.
  let tokens: Int
  /// The end tag's tokens.
  let closing: [llama_token]

  /// The budget `reasoning` sets for a template with `syntax`, if any: none
  /// for a template that does not think, for `.off` and for `.deep`.
  init?(
    _ reasoning: GenerationOptions.Reasoning?, syntax: ThoughtSyntax?, model: LlamaModel
  ) throws(HybridInferenceError) {
    guard let syntax, let tokens = reasoning?.tokenBudget, tokens > 0 else { return nil }
    self.tokens = tokens
    closing = try model.tokenize(syntax.closing, addSpecial: false, parseSpecial: true)
  }
}
