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

  /// Options with either half, or both.
  public init(gemini: GenerationConfig? = nil, foundationModels: GenerationOptions? = nil) {
    self.gemini = gemini
    self.foundationModels = foundationModels
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
  }

  /// Keeps only the half that a model in `placement` reads.
  func scoped(to placement: ModelPlacement) -> HybridGenerationOptions {
    switch placement {
    case .onDevice: HybridGenerationOptions(foundationModels: foundationModels)
    case .cloud: HybridGenerationOptions(gemini: gemini)
    }
  }
}
