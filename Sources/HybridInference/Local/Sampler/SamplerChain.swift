import CLlama

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

  /// - Parameter grammar: A GBNF grammar (start rule `root`) the answer must
  ///   follow, with the vocabulary it is applied to; it goes first in the
  ///   chain, so every later sampler only sees tokens the grammar allows.
  init(
    options: GenerationOptions?, grammar: (text: String, vocab: OpaquePointer)? = nil
  ) throws(HybridInferenceError) {
    var params = llama_sampler_chain_default_params()
    params.no_perf = true
    guard let chain = llama_sampler_chain_init(params) else {
      throw .generationFailed("llama.cpp could not create a sampler")
    }
    pointer = chain
    if let grammar {
      // NULL when llama.cpp's parser refuses the grammar (or the vocabulary
      // cannot express it): a typed error, so a hybrid can fall back.
      guard let sampler = llama_sampler_init_grammar(grammar.vocab, grammar.text, "root") else {
        throw .unsupportedRequest("llama.cpp refused the response schema's grammar")
      }
      llama_sampler_chain_add(chain, sampler)
    }
    let temperature = options?.temperature.map(Float.init) ?? Self.defaultTemperature
    switch options?.sampling?.kind {
    case .greedy:
      add(llama_sampler_init_greedy())
    case .topK(let top, let seed):
      add(llama_sampler_init_top_k(Int32(clamping: top)))
      add(llama_sampler_init_temp(temperature))
      add(llama_sampler_init_dist(Self.llamaSeed(seed)))
    case .nucleus(let threshold, let seed):
      add(llama_sampler_init_top_p(Float(threshold), 1))
      add(llama_sampler_init_temp(temperature))
      add(llama_sampler_init_dist(Self.llamaSeed(seed)))
    case nil:
      add(llama_sampler_init_top_k(Self.defaultTopK))
      add(llama_sampler_init_top_p(Self.defaultTopP, 1))
      add(llama_sampler_init_temp(temperature))
      add(llama_sampler_init_dist(Self.llamaSeed(nil)))
    }
  }

  deinit {
    llama_sampler_free(pointer)
  }

  /// Samples (and accepts) the next token from the context's last logits.
  func sample(_ context: OpaquePointer) -> llama_token {
    llama_sampler_sample(pointer, context, -1)
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
