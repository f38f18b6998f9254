/// One candidate answer (REST `Candidate`).
public struct Candidate: Sendable, Hashable, Codable {
  /// The answer; nil when it was withheld.
  public var content: Content?
  /// Why generation stopped; nil until the last event of a stream.
  public var finishReason: FinishReason?
  /// Google's explanation of the finish reason, when it gives one.
  public var finishMessage: String?
  /// The answer's safety ratings.
  public var safetyRatings: [SafetyRating]?
  /// Sources the answer quotes.
  public var citationMetadata: CitationMetadata?
  /// How Google Search grounded the answer, with the search suggestions
  /// to show (`ServerTool.googleSearch()`).
  public var groundingMetadata: GroundingMetadata?
  /// What the URL-context tool fetched (`ServerTool.urlContext()`).
  public var urlContextMetadata: URLContextMetadata?
  /// The mean log-probability of the answer's tokens.
  public var avgLogprobs: Double?
  /// Tokens in this candidate.
  public var tokenCount: Int?
  /// The candidate's position, when several were asked for.
  public var index: Int?

  /// A candidate.
  public init(
    content: Content? = nil, finishReason: FinishReason? = nil, finishMessage: String? = nil,
    safetyRatings: [SafetyRating]? = nil, citationMetadata: CitationMetadata? = nil,
    groundingMetadata: GroundingMetadata? = nil, urlContextMetadata: URLContextMetadata? = nil,
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

extension Candidate {
  /// Whether the candidate holds nothing an app could use: no part, no
  /// finish reason, no citation, grounding or URL-context metadata.
  package var isEmpty: Bool {
    (content?.parts.isEmpty ?? true) && finishReason == nil && citationMetadata == nil
      && groundingMetadata == nil && urlContextMetadata == nil
  }
}

/// Why a candidate stopped (REST `FinishReason`); unknown values are kept.
///
/// A struct over the wire string, not an enum: the REST API adds values over
/// time, and a closed enum would turn a new one into a decoding failure.
public struct FinishReason: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
  /// The wire name.
  public let rawValue: String
  /// A reason by its wire name, for values newer than this library.
  public init(rawValue: String) { self.rawValue = rawValue }
  /// The wire name.
  public var description: String { rawValue }

  /// The model finished its answer.
  public static let stop = FinishReason(rawValue: "STOP")
  /// The answer reached `maxOutputTokens`.
  public static let maxTokens = FinishReason(rawValue: "MAX_TOKENS")
  /// Stopped by the safety filters.
  public static let safety = FinishReason(rawValue: "SAFETY")
  /// Stopped for reciting training data.
  public static let recitation = FinishReason(rawValue: "RECITATION")
  /// Stopped for an unsupported language.
  public static let language = FinishReason(rawValue: "LANGUAGE")
  /// Stopped for another reason.
  public static let other = FinishReason(rawValue: "OTHER")
  /// Stopped for terms on a blocklist.
  public static let blocklist = FinishReason(rawValue: "BLOCKLIST")
  /// Stopped for prohibited content.
  public static let prohibitedContent = FinishReason(rawValue: "PROHIBITED_CONTENT")
  /// Stopped for sensitive personal information.
  public static let spii = FinishReason(rawValue: "SPII")
  /// The model produced an invalid function call.
  public static let malformedFunctionCall = FinishReason(rawValue: "MALFORMED_FUNCTION_CALL")
  /// A generated image was unsafe.
  public static let imageSafety = FinishReason(rawValue: "IMAGE_SAFETY")

  /// Whether the reason means the answer was withheld or cut short, which
  /// the library reports as `HybridInferenceError.responseStopped` rather
  /// than as a normal answer.
  ///
  /// Only STOP, MAX_TOKENS and MALFORMED_FUNCTION_CALL are normal ends. A
  /// reason newer than this library counts as stopped (its raw string stays
  /// in `rawValue`): an answer that ended for a reason nobody here knows is
  /// safer reported than passed off as complete, as the Firebase SDK does.
  public var isStoppedByPolicy: Bool {
    switch self {
    case .stop, .maxTokens, .malformedFunctionCall: false
    default: true
    }
  }
}
