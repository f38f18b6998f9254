/// Per-request options for both models at once.
///
/// Each model reads only its own half: the cloud model `gemini`, the on-device
/// model `foundationModels`. A nil half means that model's defaults, so one
/// value works whichever model ends up answering.
public struct HybridGenerationOptions: Sendable, Hashable {
  /// Settings for the cloud model.
  public var gemini: GenerationConfig?
  /// Settings for the on-device model.
  public var foundationModels: GenerationOptions?
  /// Whether the model may, must or must not call the session's tools
  /// (both models follow it). `.auto` by default.
  public var toolChoice: ToolChoice
  /// The most rounds of tool calls one request may take before it ends with
  /// `HybridInferenceError.tooManyToolRounds`; 8 by default, at least 1.
  public var maximumToolRounds: Int

  /// The default limit on tool rounds per request.
  public static let defaultMaximumToolRounds = 8

  /// Options with either half, or both, and how tools may be called.
  public init(
    gemini: GenerationConfig? = nil, foundationModels: GenerationOptions? = nil, toolChoice: ToolChoice = .auto,
    maximumToolRounds: Int = HybridGenerationOptions.defaultMaximumToolRounds
  ) {
    self.gemini = gemini
    self.foundationModels = foundationModels
    self.toolChoice = toolChoice
    self.maximumToolRounds = maximumToolRounds
  }

  /// Both models' defaults.
  public static let `default` = HybridGenerationOptions()

  /// Settings for both models.
  public static func hybrid(gemini: GenerationConfig?, foundationModels: GenerationOptions?)
    -> HybridGenerationOptions
  {
    HybridGenerationOptions(gemini: gemini, foundationModels: foundationModels)
  }

  /// Settings for the cloud model only.
  public static func gemini(_ config: GenerationConfig) -> HybridGenerationOptions {
    HybridGenerationOptions(gemini: config)
  }

  /// Settings for the on-device model only.
  public static func foundationModels(_ options: GenerationOptions) -> HybridGenerationOptions {
    HybridGenerationOptions(foundationModels: options)
  }

  /// Validates both halves, whichever model will read them: an out-of-range
  /// value is the caller's mistake and should not depend on routing.
  func validate() throws(HybridInferenceError) {
    try gemini?.validate()
    try foundationModels?.validate()
    if maximumToolRounds < 1 {
      throw .invalidOptions("HybridGenerationOptions.maximumToolRounds must be >= 1, got \(maximumToolRounds)")
    }
  }

  /// Keeps only the half that a model in `placement` reads.
  func scoped(to placement: ModelPlacement) -> HybridGenerationOptions {
    switch placement {
    case .onDevice:
      HybridGenerationOptions(
        foundationModels: foundationModels, toolChoice: toolChoice, maximumToolRounds: maximumToolRounds)
    case .cloud:
      HybridGenerationOptions(gemini: gemini, toolChoice: toolChoice, maximumToolRounds: maximumToolRounds)
    }
  }
}
