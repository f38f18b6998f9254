/// One candidate answer (REST `Candidate`).
public struct Candidate: Sendable, Hashable, Codable {
  public var content: Content?
  public var finishReason: FinishReason?
  /// Google's explanation of the finish reason, when it gives one.
  public var finishMessage: String?
  public var safetyRatings: [SafetyRating]?
  public var citationMetadata: CitationMetadata?
  /// Search, Maps and URL grounding, kept as sent.
  public var groundingMetadata: JSONValue?
  public var urlContextMetadata: JSONValue?
  public var avgLogprobs: Double?
  public var tokenCount: Int?
  public var index: Int?

  public init(
    content: Content? = nil, finishReason: FinishReason? = nil, finishMessage: String? = nil,
    safetyRatings: [SafetyRating]? = nil, citationMetadata: CitationMetadata? = nil,
    groundingMetadata: JSONValue? = nil, urlContextMetadata: JSONValue? = nil,
    avgLogprobs: Double? = nil, tokenCount: Int? = nil, index: Int? = nil
  ) {
    self.content = content
    self.finishReason = finishReason
    self.finishMessage = finishMessage
    self.safetyRatings = safetyRatings
    self.citationMetadata = citationMetadata
    self.groundingMetadata = groundingMetadata
    self.urlContextMetadata = urlContextMetadata
    self.avgLogprobs = avgLogprobs
    self.tokenCount = tokenCount
    self.index = index
  }
}

/// Why a candidate stopped (REST `FinishReason`); unknown values are kept.
public struct FinishReason: ProtoEnum {
  public let rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }

  public static let stop = FinishReason(rawValue: "STOP")
  public static let maxTokens = FinishReason(rawValue: "MAX_TOKENS")
  public static let safety = FinishReason(rawValue: "SAFETY")
  public static let recitation = FinishReason(rawValue: "RECITATION")
  public static let language = FinishReason(rawValue: "LANGUAGE")
  public static let other = FinishReason(rawValue: "OTHER")
  public static let blocklist = FinishReason(rawValue: "BLOCKLIST")
  public static let prohibitedContent = FinishReason(rawValue: "PROHIBITED_CONTENT")
  public static let spii = FinishReason(rawValue: "SPII")
  public static let malformedFunctionCall = FinishReason(rawValue: "MALFORMED_FUNCTION_CALL")
  public static let imageSafety = FinishReason(rawValue: "IMAGE_SAFETY")

  /// Whether the reason means the answer was withheld or cut for policy, which
  /// the library reports as an error rather than as a normal answer.
  public var isStoppedByPolicy: Bool {
    switch self {
    case .stop, .maxTokens, .malformedFunctionCall: false
    case .safety, .recitation, .language, .other, .blocklist, .prohibitedContent, .spii,
      .imageSafety:
      true
    default: false
    }
  }
}
