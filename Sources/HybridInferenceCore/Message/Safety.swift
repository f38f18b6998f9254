/// Why a prompt was blocked (REST `PromptFeedback`).
public struct PromptFeedback: Sendable, Hashable, Codable {
  /// Why the prompt was blocked; nil when it was not (or no reason was given).
  public var blockReason: BlockReason?
  /// Google's explanation, when it gives one.
  public var blockReasonMessage: String?
  /// The prompt's safety ratings.
  public var safetyRatings: [SafetyRating]?

  /// Prompt feedback.
  public init(
    blockReason: BlockReason? = nil, blockReasonMessage: String? = nil,
    safetyRatings: [SafetyRating]? = nil
  ) {
    self.blockReason = blockReason
    self.blockReasonMessage = blockReasonMessage
    self.safetyRatings = safetyRatings
  }

  /// The REST `BlockReason` enum; unknown values are kept.
  ///
  /// A struct over the wire string, not an enum: the REST API adds values over
  /// time, and a closed enum would turn a new one into a decoding failure.
  public struct BlockReason: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The wire name.
    public let rawValue: String
    /// A reason by its wire name, for values newer than this library.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The wire name.
    public var description: String { rawValue }

    /// No reason given.
    public static let unspecified = BlockReason(rawValue: "BLOCK_REASON_UNSPECIFIED")
    /// Blocked by the safety filters.
    public static let safety = BlockReason(rawValue: "SAFETY")
    /// Blocked for another reason.
    public static let other = BlockReason(rawValue: "OTHER")
    /// The prompt has terms on a blocklist.
    public static let blocklist = BlockReason(rawValue: "BLOCKLIST")
    /// The prompt has prohibited content.
    public static let prohibitedContent = BlockReason(rawValue: "PROHIBITED_CONTENT")
    /// An image in the prompt was unsafe.
    public static let imageSafety = BlockReason(rawValue: "IMAGE_SAFETY")
  }
}

/// One safety classification of a prompt or candidate (REST `SafetyRating`).
public struct SafetyRating: Sendable, Hashable, Codable {
  /// The harm category (`HARM_CATEGORY_HATE_SPEECH`).
  public var category: String
  /// How likely the content is harmful (`NEGLIGIBLE` ... `HIGH`).
  public var probability: String?
  /// The probability as a score.
  public var probabilityScore: Double?
  /// How severe the harm would be.
  public var severity: String?
  /// The severity as a score.
  public var severityScore: Double?
  /// Whether this rating caused a block.
  public var blocked: Bool?

  /// A rating.
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
  /// The quoted sources, in order.
  public var citationSources: [CitationSource]

  /// Citations of these sources.
  public init(citationSources: [CitationSource]) { self.citationSources = citationSources }

  enum CodingKeys: String, CodingKey { case citationSources }

  /// Decodes citations; a missing list is empty.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    citationSources =
      try container.decodeIfPresent([CitationSource].self, forKey: .citationSources) ?? []
  }

  /// One quoted source.
  public struct CitationSource: Sendable, Hashable, Codable {
    /// Where the quote starts in the answer text.
    public var startIndex: Int?
    /// Where the quote ends in the answer text.
    public var endIndex: Int?
    /// The source.
    public var uri: String?
    /// The source's license, when known.
    public var license: String?
    /// A source.
    public init(startIndex: Int? = nil, endIndex: Int? = nil, uri: String? = nil, license: String? = nil) {
      self.startIndex = startIndex
      self.endIndex = endIndex
      self.uri = uri
      self.license = license
    }
  }
}
