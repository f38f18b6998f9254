/// Why a prompt was blocked (REST `PromptFeedback`).
public struct PromptFeedback: Sendable, Hashable, Codable {
  public var blockReason: BlockReason?
  public var blockReasonMessage: String?
  public var safetyRatings: [SafetyRating]?

  public init(
    blockReason: BlockReason? = nil, blockReasonMessage: String? = nil,
    safetyRatings: [SafetyRating]? = nil
  ) {
    self.blockReason = blockReason
    self.blockReasonMessage = blockReasonMessage
    self.safetyRatings = safetyRatings
  }

  /// The REST `BlockReason` enum; unknown values are kept.
  public struct BlockReason: ProtoEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unspecified = BlockReason(rawValue: "BLOCK_REASON_UNSPECIFIED")
    public static let safety = BlockReason(rawValue: "SAFETY")
    public static let other = BlockReason(rawValue: "OTHER")
    public static let blocklist = BlockReason(rawValue: "BLOCKLIST")
    public static let prohibitedContent = BlockReason(rawValue: "PROHIBITED_CONTENT")
    public static let imageSafety = BlockReason(rawValue: "IMAGE_SAFETY")
  }
}

/// One safety classification of a prompt or candidate (REST `SafetyRating`).
public struct SafetyRating: Sendable, Hashable, Codable {
  public var category: String
  public var probability: String?
  public var probabilityScore: Double?
  public var severity: String?
  public var severityScore: Double?
  public var blocked: Bool?

  public init(
    category: String, probability: String? = nil, probabilityScore: Double? = nil,
    severity: String? = nil, severityScore: Double? = nil, blocked: Bool? = nil
  ) {
    self.category = category
    self.probability = probability
    self.probabilityScore = probabilityScore
    self.severity = severity
    self.severityScore = severityScore
    self.blocked = blocked
  }
}

/// Sources the answer quotes (REST `CitationMetadata`).
public struct CitationMetadata: Sendable, Hashable, Codable {
  public var citationSources: [CitationSource]

  public init(citationSources: [CitationSource]) { self.citationSources = citationSources }

  enum CodingKeys: String, CodingKey { case citationSources }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    citationSources =
      try container.decodeIfPresent([CitationSource].self, forKey: .citationSources) ?? []
  }

  /// One quoted source.
  public struct CitationSource: Sendable, Hashable, Codable {
    public var startIndex: Int?
    public var endIndex: Int?
    public var uri: String?
    public var license: String?
    public init(startIndex: Int? = nil, endIndex: Int? = nil, uri: String? = nil, license: String? = nil) {
      self.startIndex = startIndex
      self.endIndex = endIndex
      self.uri = uri
      self.license = license
    }
  }
}
