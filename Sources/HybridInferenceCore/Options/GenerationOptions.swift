/// Generation settings for the on-device model, shaped like Apple's
/// Foundation Models `GenerationOptions`.
///
/// Only the on-device model reads it. Nil fields mean the model's defaults:
/// random sampling at temperature 0.8 with top-p 0.95, up to the context window.
public struct GenerationOptions: Sendable, Hashable {
  /// How the next token is chosen.
  public var sampling: SamplingMode?
  /// Softens (> 1) or sharpens (< 1) the distribution; must be a finite
  /// number >= 0 (0 is greedy). Past `Float`'s range it acts as `Float`'s
  /// largest value: every token about as likely.
  public var temperature: Double?
  /// The most tokens the answer may have; must be > 0. A limit the context
  /// window can hold is reserved up front: a conversation without room for
  /// it throws `contextWindowExceeded` before anything is decoded. A larger
  /// one (`.max` included) means: answer until the window is full, with the
  /// default room (a quarter of the window, up to 256 tokens) reserved.
  public var maximumResponseTokens: Int?
  /// How much a model that thinks may think; nil lets it think as its
  /// template does by default. The thought tokens count toward
  /// `maximumResponseTokens`. The cloud model's counterpart is
  /// `GenerationConfig.thinkingConfig`.
  public var reasoning: Reasoning?

  /// Options; nil fields keep the on-device defaults.
  public init(
    sampling: SamplingMode? = nil, temperature: Double? = nil, maximumResponseTokens: Int? = nil,
    reasoning: Reasoning? = nil
  ) {
    self.sampling = sampling
    self.temperature = temperature
    self.maximumResponseTokens = maximumResponseTokens
    self.reasoning = reasoning
  }

  /// A sampling strategy.
  public struct SamplingMode: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
      case greedy
      case topK(Int, seed: UInt64?)
      case nucleus(Double, seed: UInt64?)
    }

    package let kind: Kind

    /// Always the most likely token: the same prompt gives the same answer.
    public static let greedy = SamplingMode(kind: .greedy)

    /// Samples among the `top` most likely tokens; a seed makes it repeatable.
    public static func random(top: Int, seed: UInt64? = nil) -> SamplingMode {
      SamplingMode(kind: .topK(top, seed: seed))
    }

    /// Samples among the most likely tokens whose probabilities add up to
    /// `probabilityThreshold` (nucleus sampling); a seed makes it repeatable.
    public static func random(probabilityThreshold: Double, seed: UInt64? = nil) -> SamplingMode {
      SamplingMode(kind: .nucleus(probabilityThreshold, seed: seed))
    }
  }

  package func validate() throws(HybridInferenceError) {
    if let temperature, !(temperature >= 0 && temperature.isFinite) {
      throw .invalidOptions("GenerationOptions.temperature must be a finite number >= 0, got \(temperature)")
    }
    if let maximumResponseTokens, maximumResponseTokens <= 0 {
      throw .invalidOptions(
        "GenerationOptions.maximumResponseTokens must be > 0, got \(maximumResponseTokens)")
    }
    try reasoning?.validate()
    switch sampling?.kind {
    case .topK(let top, _) where top <= 0:
      throw .invalidOptions("GenerationOptions.sampling top must be > 0, got \(top)")
    case .nucleus(let threshold, _) where !(threshold > 0 && threshold <= 1):
      throw .invalidOptions(
        "GenerationOptions.sampling probabilityThreshold must be in (0, 1], got \(threshold)")
    default:
      break
    }
  }
}
