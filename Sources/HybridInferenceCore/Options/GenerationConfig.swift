/// Generation settings for the cloud model (REST `GenerationConfig`).
///
/// Encodes to the wire field for field; nil fields are left out so the server
/// applies its own defaults. Only the cloud model reads it.
public struct GenerationConfig: Sendable, Hashable, Codable {
  /// Randomness of sampling; 0 is the most deterministic. Must be >= 0.
  public var temperature: Double?
  /// Nucleus sampling: the probability mass to sample from, in 0...1.
  public var topP: Double?
  /// Samples among the `topK` most likely tokens; must be > 0.
  public var topK: Int?
  /// How many candidate answers to return; must be > 0.
  public var candidateCount: Int?
  /// The most tokens the answer may have; must be > 0.
  public var maxOutputTokens: Int?
  /// Strings that end the answer where they appear.
  public var stopSequences: [String]?
  /// Penalises tokens already used at all, encouraging new topics.
  public var presencePenalty: Double?
  /// Penalises tokens by how often they were used, discouraging repetition.
  public var frequencyPenalty: Double?
  /// A seed for repeatable sampling, where the model supports it.
  public var seed: Int?
  /// The answer's MIME type, such as `"application/json"`.
  public var responseMimeType: String?
  /// How much the model thinks before answering.
  public var thinkingConfig: ThinkingConfig?
  /// The JSON Schema the answer must follow (REST `responseJsonSchema`);
  /// needs `responseMimeType` `"application/json"`. A session's structured
  /// requests (`respond(to:generating:)`) set both for you.
  public var responseJsonSchema: GenerationSchema?

  /// A configuration; every field left nil keeps the server's default.
  public init(
    temperature: Double? = nil, topP: Double? = nil, topK: Int? = nil,
    candidateCount: Int? = nil, maxOutputTokens: Int? = nil, stopSequences: [String]? = nil,
    presencePenalty: Double? = nil, frequencyPenalty: Double? = nil, seed: Int? = nil,
    responseMimeType: String? = nil, thinkingConfig: ThinkingConfig? = nil,
    responseJsonSchema: GenerationSchema? = nil
  ) {
    self.temperature = temperature
    self.topP = topP
    self.topK = topK
    self.candidateCount = candidateCount
    self.maxOutputTokens = maxOutputTokens
    self.stopSequences = stopSequences
    self.presencePenalty = presencePenalty
    self.frequencyPenalty = frequencyPenalty
    self.seed = seed
    self.responseMimeType = responseMimeType
    self.thinkingConfig = thinkingConfig
    self.responseJsonSchema = responseJsonSchema
  }

  /// Checks the ranges the API documents, so a bad value fails before any request.
  package func validate() throws(HybridInferenceError) {
    if let temperature, !(temperature >= 0) {
      throw .invalidOptions("GenerationConfig.temperature must be >= 0, got \(temperature)")
    }
    if let topP, !(0...1).contains(topP) {
      throw .invalidOptions("GenerationConfig.topP must be in 0...1, got \(topP)")
    }
    if let topK, topK <= 0 {
      throw .invalidOptions("GenerationConfig.topK must be > 0, got \(topK)")
    }
    if let candidateCount, candidateCount <= 0 {
      throw .invalidOptions("GenerationConfig.candidateCount must be > 0, got \(candidateCount)")
    }
    if let maxOutputTokens, maxOutputTokens <= 0 {
      throw .invalidOptions("GenerationConfig.maxOutputTokens must be > 0, got \(maxOutputTokens)")
    }
    if let responseJsonSchema {
      if let error = responseJsonSchema.derivationError { throw error }
      guard responseMimeType == "application/json" else {
        throw .invalidOptions("GenerationConfig.responseJsonSchema needs responseMimeType \"application/json\"")
      }
    }
    if let thinkingBudget = thinkingConfig?.thinkingBudget, thinkingBudget < -1 {
      throw .invalidOptions("ThinkingConfig.thinkingBudget must be >= -1, got \(thinkingBudget)")
    }
  }
}

/// How much the cloud model thinks before answering (REST `ThinkingConfig`).
public struct ThinkingConfig: Sendable, Hashable, Codable {
  /// The thinking effort; sent as its upper-case enum name (`"HIGH"`).
  public var thinkingLevel: ThinkingLevel?
  /// A token budget for thinking; `-1` lets the model decide, `0` turns it off.
  public var thinkingBudget: Int?
  /// Whether thought summaries come back as `thought` parts.
  public var includeThoughts: Bool?

  /// A thinking configuration; nil fields keep the server's default.
  public init(
    thinkingLevel: ThinkingLevel? = nil, thinkingBudget: Int? = nil, includeThoughts: Bool? = nil
  ) {
    self.thinkingLevel = thinkingLevel
    self.thinkingBudget = thinkingBudget
    self.includeThoughts = includeThoughts
  }

  /// The thinking effort levels of the REST API.
  public enum ThinkingLevel: String, Sendable, Hashable, Codable, CaseIterable {
    /// As little thinking as the model allows.
    case minimal = "MINIMAL"
    /// Light thinking, for faster answers.
    case low = "LOW"
    /// Balanced thinking.
    case medium = "MEDIUM"
    /// The most thinking, for the hardest questions.
    case high = "HIGH"
  }
}
