extension GenerationOptions {
  /// How much a model that thinks before answering (Qwen3, DeepSeek-R1
  /// distills, SmolLM3, gpt-oss) may think.
  ///
  /// A struct with static members rather than an enum, so that levels can be
  /// added without breaking a caller's `switch`. The on-device model reads it;
  /// a model that does not think ignores it. The reasoning itself arrives as
  /// parts with `thought == true`, never in the answer's text.
  public struct Reasoning: Sendable, Hashable {
    /// The kinds of setting, for the model that applies them.
    package enum Kind: Sendable, Hashable {
      case off
      case effort(Effort)
      case budget(Int)
    }

    /// The effort levels, named as gpt-oss's `reasoning_effort` names them.
    package enum Effort: String, Sendable, Hashable {
      case low, medium, high
    }

    package let kind: Kind

    /// No thinking: the template's switch (`enable_thinking`) where it has
    /// one, else a thought block closed before it starts.
    public static let off = Reasoning(kind: .off)
    /// Little thinking: gpt-oss's `reasoning_effort` "low"; other models
    /// think up to `lightBudget` tokens.
    public static let light = Reasoning(kind: .effort(.low))
    /// Some thinking: gpt-oss's "medium"; other models up to `moderateBudget` tokens.
    public static let moderate = Reasoning(kind: .effort(.medium))
    /// As much thinking as the model wants: gpt-oss's "high"; other models
    /// are not limited.
    public static let deep = Reasoning(kind: .effort(.high))

    /// Thinks for at most `tokens` tokens (> 0): the block is then closed and
    /// the answer follows.
    public static func budget(tokens: Int) -> Reasoning {
      Reasoning(kind: .budget(tokens))
    }

    /// The thought tokens `.light` allows a model without effort levels.
    public static let lightBudget = 512
    /// The thought tokens `.moderate` allows a model without effort levels.
    public static let moderateBudget = 2048

    /// The most thought tokens, for a model without effort levels; nil when
    /// thinking is not limited (`.deep`) or is off.
    package var tokenBudget: Int? {
      switch kind {
      case .off: nil
      case .effort(.low): Self.lightBudget
      case .effort(.medium): Self.moderateBudget
      case .effort(.high): nil
      case .budget(let tokens): tokens
      }
    }

    func validate() throws(HybridInferenceError) {
      if case .budget(let tokens) = kind, tokens <= 0 {
        throw .invalidOptions("GenerationOptions.reasoning budget must be > 0 tokens, got \(tokens)")
      }
    }
  }
}
