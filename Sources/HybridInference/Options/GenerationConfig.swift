/// Generation settings for the cloud model (REST `GenerationConfig`).
///
/// Encodes to the wire field for field; nil fields are left out so the server
/// applies its own defaults. Only the cloud model reads it.
public struct GenerationConfig: Sendable, Hashable, Codable {
  public var temperature: Double?
  public var topP: Double?
  public var topK: Int?
  public var candidateCount: Int?
  public var maxOutputTokens: Int?
  public var stopSequences: [String]?
  public var presencePenalty: Double?
  public var frequencyPenalty: Double?
  public var seed: Int?
  public var responseMimeType: String?
  public var thinkingConfig: ThinkingConfig?

  public init(
    temperature: Double? = nil, topP: Double? = nil, topK: Int? = nil,
    candidateCount: Int? = nil, maxOutputTokens: Int? = nil, stopSequences: [String]? = nil,
    presencePenalty: Double? = nil, frequencyPenalty: Double? = nil, seed: Int? = nil,
    responseMimeType: String? = nil, thinkingConfig: ThinkingConfig? = nil
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
  }

  /// Checks the ranges the API documents, so a bad value fails before any request.
  func validate() throws(HybridInferenceError) {
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

  public init(
    thinkingLevel: ThinkingLevel? = nil, thinkingBudget: Int? = nil, includeThoughts: Bool? = nil
  ) {
    self.thinkingLevel = thinkingLevel
    self.thinkingBudget = thinkingBudget
    self.includeThoughts = includeThoughts
  }

  /// The thinking effort levels of the REST API.
  public enum ThinkingLevel: String, Sendable, Hashable, Codable, CaseIterable {
    case minimal = "MINIMAL"
    case low = "LOW"
    case medium = "MEDIUM"
    case high = "HIGH"
  }
}
