import HybridInferenceCore
import HybridInferenceRemote

/// A per-category blocking threshold sent with every request (REST `SafetySetting`).
///
/// Lets an app loosen or tighten Gemini's content filters; a prompt or answer
/// that trips them comes back as `HybridInferenceError.promptBlocked` or
/// `.responseStopped`.
public struct SafetySetting: Sendable, Hashable, Codable {
  /// The harm category the threshold applies to.
  public var category: HarmCategory
  /// How likely harm must be before content is blocked.
  public var threshold: HarmBlockThreshold

  /// A threshold for one category.
  public init(category: HarmCategory, threshold: HarmBlockThreshold) {
    self.category = category
    self.threshold = threshold
  }

  /// The REST `HarmCategory` enum; unknown values are kept.
  ///
  /// A struct over the wire string, not an enum: the REST API adds values over
  /// time, and a closed enum would turn a new one into a decoding failure.
  public struct HarmCategory: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The wire name.
    public let rawValue: String
    /// A category by its wire name, for values newer than this library.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The wire name.
    public var description: String { rawValue }

    /// Negative or harmful comments targeting identity or protected attributes.
    public static let hateSpeech = HarmCategory(rawValue: "HARM_CATEGORY_HATE_SPEECH")
    /// Content that promotes or enables access to harmful goods or activities.
    public static let dangerousContent = HarmCategory(rawValue: "HARM_CATEGORY_DANGEROUS_CONTENT")
    /// Malicious, intimidating, bullying or abusive content.
    public static let harassment = HarmCategory(rawValue: "HARM_CATEGORY_HARASSMENT")
    /// Sexually explicit content.
    public static let sexuallyExplicit = HarmCategory(rawValue: "HARM_CATEGORY_SEXUALLY_EXPLICIT")
    /// Content that may harm civic integrity.
    public static let civicIntegrity = HarmCategory(rawValue: "HARM_CATEGORY_CIVIC_INTEGRITY")
  }

  /// The REST `HarmBlockThreshold` enum; unknown values are kept.
  ///
  /// A struct over the wire string, not an enum: the REST API adds values over
  /// time, and a closed enum would turn a new one into a decoding failure.
  public struct HarmBlockThreshold: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The wire name.
    public let rawValue: String
    /// A threshold by its wire name, for values newer than this library.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The wire name.
    public var description: String { rawValue }

    /// Blocks content with a low or higher probability of harm.
    public static let blockLowAndAbove = HarmBlockThreshold(rawValue: "BLOCK_LOW_AND_ABOVE")
    /// Blocks content with a medium or higher probability of harm.
    public static let blockMediumAndAbove = HarmBlockThreshold(rawValue: "BLOCK_MEDIUM_AND_ABOVE")
    /// Blocks only content with a high probability of harm.
    public static let blockOnlyHigh = HarmBlockThreshold(rawValue: "BLOCK_ONLY_HIGH")
    /// Blocks nothing, but still reports ratings.
    public static let blockNone = HarmBlockThreshold(rawValue: "BLOCK_NONE")
    /// Turns the filter for the category off.
    public static let off = HarmBlockThreshold(rawValue: "OFF")
  }
}
