import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// A llama.cpp sampler chain built from `GenerationOptions`: the one place
/// where options become samplers.
///
/// Defaults when an option is nil: top-k 40, top-p 0.95, temperature 0.8, a
/// random seed. A seed makes random sampling repeatable: the same seed and
/// prompt give the same text.
final class SamplerChain {
  static let defaultTemperature: Float = 0.8
  static let defaultTopK: Int32 = 40
  static let defaultTopP: Float = 0.95

  let pointer: UnsafeMutablePointer<llama_sampler>
  /// The response schema's grammar, checked beside the chain (not in it).
  private let constraint: GrammarConstraint?
  /// How a token is drawn without handing llama.cpp the whole vocabulary:
  /// the same token either way.
  private enum Shortcut {
    /// The chain is the greedy sampler alone: the largest logit, read in
    /// place (`GreedyPick`).
    case greedy
    /// The chain starts with a top-k of this k (the default chain and
    /// `.random(top:seed:)`): it is given only the k largest logits (`TopKPick`).
    case topK(Int)
    case none
  }

  private let shortcut: Shortcut
  /// `TopKPick`'s candidate array, kept from step to step.
  private var candidates: [llama_token_data] = []

  /// - Parameter grammar: A GBNF grammar (start rule `root`) the answer must
  ///   follow, with the model whose vocabulary it is applied to. It is kept
  ///   beside the chain and checked lazily (`GrammarConstraint`), because
  ///   filtering the whole vocabulary first costs more than the decode step.
  ///   With `lazy`, the grammar is a tool call's, and holds only once that
  ///   syntax's trigger appears (`GrammarConstraint`).
  init(
    options: GenerationOptions?, grammar: (text: String, model: LlamaModel)? = nil, lazy: ToolCallSyntax? = nil
  ) throws(HybridInferenceError) {
    var params = llama_sampler_chain_default_params()
    params.no_perf = true
    guard let chain = llama_sampler_chain_init(params) else {
      throw .generationFailed("llama.cpp could not create a sampler")
    }
    pointer = chain
    do {
      constraint = try grammar.map { grammar throws(HybridInferenceError) in
        try GrammarConstraint(grammar: grammar.text, model: grammar.model, lazy: lazy)
      }
    } catch {
      llama_sampler_free(chain)
      throw error
    }
    // Validated finite and >= 0 (`GenerationOptions.validate`); past Float's range, Float's largest.
    let temperature =
      options?.temperature.map { Float(min($0, Double(Float.greatestFiniteMagnitude))) } ?? Self.defaultTemperature
    switch options?.sampling?.kind {
    case .greedy:
      shortcut = .greedy
      add(llama_sampler_init_greedy())
    case .topK(let top, let seed):
      shortcut = .topK(top)
      add(llama_sampler_init_top_k(Int32(clamping: top)))
      add(llama_sampler_init_temp(temperature))
      add(llama_sampler_init_dist(Self.llamaSeed(seed)))
    case .nucleus(let threshold, let seed):
      shortcut = .none
      add(llama_sampler_init_top_p(Float(threshold), 1))
      add(llama_sampler_init_temp(temperature))
      add(llama_sampler_init_dist(Self.llamaSeed(seed)))
    case nil:
      shortcut = .topK(Int(Self.defaultTopK))
      add(llama_sampler_init_top_k(Self.defaultTopK))
      add(llama_sampler_init_top_p(Self.defaultTopP, 1))
      add(llama_sampler_init_temp(temperature))
      add(llama_sampler_init_dist(Self.llamaSeed(nil)))
    }
  }

  deinit {
    llama_sampler_free(pointer)
  }

  /// Samples (and accepts) the next token from the logits of the batch's
  /// token at `index`.
  /// - Throws: when llama.cpp has no logits there (its samplers would
  ///   abort the process), and with a grammar when no token can continue it.
  func sample(_ context: OpaquePointer, at index: Int32) throws(HybridInferenceError) -> llama_token {
    let logits = try Self.logits(context, at: index)
    if let constraint { return try constraint.sample(chain: pointer, logits: logits) }
    switch shortcut {
    case .greedy:
      // Greedy keeps no state (its accept does nothing), so the chain is not told.
      if let pick = GreedyPick.index(in: logits) { return llama_token(pick) }
    case .topK(let count):
      if let pick = try TopKPick.sample(chain: pointer, logits: logits, count: count, buffer: &candidates) {
        return pick
      }
    case .none:
      break
    }
    return llama_sampler_sample(pointer, context, index)
  }

  /// The logits of the batch's token at `index`, one per vocabulary entry.
  /// - Throws: when llama.cpp has none there (an index outside the batch's
  ///   outputs: its release build returns null, and `llama_sampler_sample`
  ///   would then abort on its assertion).
  static func logits(
    _ context: OpaquePointer, at index: Int32
  ) throws(HybridInferenceError) -> UnsafeBufferPointer<Float> {
    let count = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(context)))
    guard count > 0, let logits = llama_get_logits_ith(context, index) else {
      throw .generationFailed("llama.cpp has no logits for the batch's token \(index)")
    }
    return UnsafeBufferPointer(start: logits, count: Int(count))
  }

  private func add(_ sampler: UnsafeMutablePointer<llama_sampler>?) {
    if let sampler { llama_sampler_chain_add(pointer, sampler) }
  }

  /// llama.cpp seeds are 32-bit and `LLAMA_DEFAULT_SEED` means "random".
  private static func llamaSeed(_ seed: UInt64?) -> UInt32 {
    guard let seed else { return UInt32(LLAMA_DEFAULT_SEED) }
    let folded = UInt32(truncatingIfNeeded: seed ^ (seed >> 32))
    return folded == UInt32(LLAMA_DEFAULT_SEED) ? folded &- 1 : folded
  }
}
