import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// A GBNF grammar (and well-formed UTF-8) imposed on sampling, checked lazily.
///
/// llama.cpp's grammar sampler tests every candidate in the vocabulary
/// against the grammar's stacks: on SmolLM2's 49,152 tokens that costs more
/// than the model's own decode step. So, as llama.cpp's `common/sampling.cpp`
/// does, the normal chain picks a token first and only that token is
/// checked; the whole vocabulary is filtered (and the chain run again) only
/// when the grammar or UTF-8 refuses it. Greedy picks the same token either
/// way; random sampling draws from the unconstrained distribution first,
/// which is what llama.cpp itself does.
final class GrammarConstraint {
  private let grammar: UnsafeMutablePointer<llama_sampler>
  private let vocabulary: VocabularyBytes
  private var utf8 = UTF8Validator()
  private var candidates: [llama_token_data]
  /// For a lazy grammar (a tool call in free text): where it starts.
  private var trigger: LazyTrigger?

  /// - Parameter lazy: The call syntax whose trigger starts the grammar
  ///   (`llama_sampler_init_grammar_lazy_patterns`); until it appears
  ///   sampling is free. Nil: the grammar holds from the first token.
  /// - Throws: `unsupportedRequest` when llama.cpp's parser refuses the
  ///   grammar (or the vocabulary cannot express it), so a hybrid can fall back.
  init(grammar text: String, model: LlamaModel, lazy: ToolCallSyntax? = nil) throws(HybridInferenceError) {
    let sampler: UnsafeMutablePointer<llama_sampler>?
    if let lazy {
      let trigger = try LazyTrigger(syntax: lazy, model: model)
      self.trigger = trigger
      if var token = trigger.token {
        sampler = llama_sampler_init_grammar_lazy_patterns(model.vocab, text, "root", nil, 0, &token, 1)
      } else {
        sampler = trigger.pattern.withCString { pattern in
          var patterns: [UnsafePointer<CChar>?] = [pattern]
          return llama_sampler_init_grammar_lazy_patterns(model.vocab, text, "root", &patterns, 1, nil, 0)
        }
      }
    } else {
      sampler = llama_sampler_init_grammar(model.vocab, text, "root")
    }
    guard let sampler else {
      throw .unsupportedRequest(
        lazy == nil ? "llama.cpp refused the response schema's grammar" : "llama.cpp refused the tool call grammar")
    }
    grammar = sampler
    vocabulary = model.vocabularyBytes
    candidates = Array(
      repeating: llama_token_data(id: 0, logit: 0, p: 0), count: Int(llama_vocab_n_tokens(model.vocab)))
  }

  deinit {
    llama_sampler_free(grammar)
  }

  /// Samples with `chain` from one step's `logits` (`SamplerChain.logits`),
  /// within the grammar, and accepts the token in both.
  /// - Throws: `generationFailed` when no token is allowed (a grammar the
  ///   vocabulary cannot continue), rather than letting llama.cpp abort.
  func sample(
    chain: UnsafeMutablePointer<llama_sampler>, logits: UnsafeBufferPointer<Float>
  ) throws(HybridInferenceError) -> llama_token {
    var choice = pick(chain: chain, logits: logits, filtered: false)
    if choice.map({ !allows($0.token) }) ?? true {
      choice = pick(chain: chain, logits: logits, filtered: true)
    }
    guard let choice, choice.allowed, let next = vocabulary.state(after: choice.token, from: utf8) else {
      throw .generationFailed("no token continues the response schema's grammar")
    }
    utf8 = next
    trigger?.accept(choice.token, piece: vocabulary.bytes(of: choice.token))
    llama_sampler_accept(grammar, choice.token)
    llama_sampler_accept(chain, choice.token)
    return choice.token
  }

  /// Runs `chain` over every candidate (after the UTF-8 and grammar filters
  /// when `filtered`); the chosen token, and whether its logit survived.
  private func pick(
    chain: UnsafeMutablePointer<llama_sampler>, logits: UnsafeBufferPointer<Float>, filtered: Bool
  ) -> (token: llama_token, allowed: Bool)? {
    let state = utf8
    for index in candidates.indices {
      var logit = logits[index]
      if filtered, vocabulary.state(after: llama_token(index), from: state) == nil { logit = -.infinity }
      if filtered, let trigger, trigger.awaiting, !trigger.admits(vocabulary.bytes(of: llama_token(index))) {
        logit = -.infinity
      }
      candidates[index] = llama_token_data(id: llama_token(index), logit: logit, p: 0)
    }
    return candidates.withUnsafeMutableBufferPointer { buffer -> (llama_token, Bool)? in
      guard let base = buffer.baseAddress else { return nil }
      var array = llama_token_data_array(data: base, size: buffer.count, selected: -1, sorted: false)
      if filtered { llama_sampler_apply(grammar, &array) }
      llama_sampler_apply(chain, &array)
      guard array.selected >= 0, array.selected < array.size else { return nil }
      let chosen = array.data[Int(array.selected)]
      return (chosen.id, !filtered || chosen.logit.isFinite)
    }
  }

  /// Whether the grammar and UTF-8 both allow `token` next.
  private func allows(_ token: llama_token) -> Bool {
    guard vocabulary.state(after: token, from: utf8) != nil else { return false }
    if let trigger, trigger.awaiting, !trigger.admits(vocabulary.bytes(of: token)) { return false }
    var single = llama_token_data(id: token, logit: 0, p: 0)
    return withUnsafeMutablePointer(to: &single) { pointer in
      var array = llama_token_data_array(data: pointer, size: 1, selected: -1, sorted: false)
      llama_sampler_apply(grammar, &array)
      return pointer.pointee.logit.isFinite
    }
  }
}
