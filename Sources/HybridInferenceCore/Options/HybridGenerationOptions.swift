/// Per-request options for both models at once.
///
/// Each model reads only its own half: a cloud model `gemini`, the on-device
/// model `foundationModels`. A nil half means that model's defaults, so one
/// value works whichever model ends up answering.
///
/// The halves are named as in Firebase AI Logic, whose hybrid API this
/// follows, but they belong to roles, not products: an `OpenAICompatibleModel`
/// is a cloud model and reads the `gemini` half too. `hybrid(cloud:onDevice:)`,
/// `cloud(_:)` and `onDevice(_:)` build the same values under the roles' names.
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
  /// The most tool calls one answer (one round) may ask for; an answer that
  /// asks for more ends the request with `HybridInferenceError.tooManyToolCalls`
  /// before any of its calls runs. 32 by default, at least 1.
  ///
  /// The calls of a round run concurrently and a tool may have effects, so
  /// this bounds both what one runaway answer can make the app do and how
  /// many tool tasks it can start at once. 32 leaves room for wide fan-outs
  /// (models that call in parallel ask for a handful, a few dozen at the
  /// very most), and with the default 8 rounds bounds a request at 256 calls.
  public var maximumToolCallsPerRound: Int

  /// The default limit on tool rounds per request.
  public static let defaultMaximumToolRounds = 8

  /// The default limit on the calls of one round.
  public static let defaultMaximumToolCallsPerRound = 32

  /// Options with either half, or both, and how tools may be called.
  public init(
    gemini: GenerationConfig? = nil, foundationModels: GenerationOptions? = nil, toolChoice: ToolChoice = .auto,
    maximumToolRounds: Int = HybridGenerationOptions.defaultMaximumToolRounds,
    maximumToolCallsPerRound: Int = HybridGenerationOptions.defaultMaximumToolCallsPerRound
  ) {
    self.gemini = gemini
    self.foundationModels = foundationModels
    self.toolChoice = toolChoice
    self.maximumToolRounds = maximumToolRounds
    self.maximumToolCallsPerRound = maximumToolCallsPerRound
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

  /// Settings for both models, by role: the same as
  /// `hybrid(gemini: cloud, foundationModels: onDevice)`. `cloud` is read by
  /// whichever cloud model answers, Gemini or an OpenAI-compatible server.
  public static func hybrid(cloud: GenerationConfig?, onDevice: GenerationOptions?) -> HybridGenerationOptions {
    hybrid(gemini: cloud, foundationModels: onDevice)
  }

  /// Settings for the cloud model only, Gemini or an OpenAI-compatible
  /// server: the same as `gemini(_:)`.
  public static func cloud(_ config: GenerationConfig) -> HybridGenerationOptions {
    gemini(config)
  }

  /// Settings for the on-device model only: the same as `foundationModels(_:)`.
  public static func onDevice(_ options: GenerationOptions) -> HybridGenerationOptions {
    foundationModels(options)
  }

  /// Validates both halves, whichever model will read them: an out-of-range
  /// value is the caller's mistake and should not depend on routing.
  func validate() throws(HybridInferenceError) {
    try gemini?.validate()
    try foundationModels?.validate()
    if maximumToolRounds < 1 {
      throw .invalidOptions("HybridGenerationOptions.maximumToolRounds must be >= 1, got \(maximumToolRounds)")
    }
    if maximumToolCallsPerRound < 1 {
      throw .invalidOptions(
        "HybridGenerationOptions.maximumToolCallsPerRound must be >= 1, got \(maximumToolCallsPerRound)")
    }
  }

  /// Keeps only the half that a model in `placement` reads.
  func scoped(to placement: ModelPlacement) -> HybridGenerationOptions {
    var scoped = self
    switch placement {
    case .onDevice: scoped.gemini = nil
    case .cloud: scoped.foundationModels = nil
    }
    return scoped
  }
}
