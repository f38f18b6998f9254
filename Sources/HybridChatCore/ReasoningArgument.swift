import HybridInferenceCore

/// The value of `--reasoning`: how much the on-device model may think.
///
/// The words are the library's levels (`GenerationOptions.Reasoning`), so
/// the flag reads like the API; a number is a budget in thought tokens. The
/// cloud's levels have their own flag, `--thinking`, because Gemini names
/// different ones (minimal, low, medium, high) and one word for both would
/// mean two things.
public enum ReasoningArgument {
  /// The largest budget accepted: the C side counts tokens in an `Int32`.
  public static let maximumBudget = Int(Int32.max)

  /// What the flag expects, for its usage error.
  static let expected = "off, light, moderate, deep or a number of thought tokens in 1...\(maximumBudget)"

  /// The reasoning `value` names; a usage error naming what is expected
  /// otherwise.
  public static func parse(_ value: String) throws(CommandError) -> GenerationOptions.Reasoning {
    switch value {
    case "off": return .off
    case "light": return .light
    case "moderate": return .moderate
    case "deep": return .deep
    default:
      guard let tokens = Int(value), (1...maximumBudget).contains(tokens) else {
        throw .usage("option '--reasoning' needs \(expected), got '\(value)'")
      }
      return .budget(tokens: tokens)
    }
  }
}
