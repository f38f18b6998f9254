/// Whether a model can answer now, and if not, why.
public enum Availability: Sendable, Hashable, CustomStringConvertible {
  /// The model can answer now.
  case available
  /// The model cannot answer now, for this reason.
  case unavailable(UnavailableReason)

  /// Whether this is `.available`.
  public var isAvailable: Bool { self == .available }

  /// The availability in words.
  public var description: String {
    switch self {
    case .available: "available"
    case .unavailable(let reason): "unavailable (\(reason))"
    }
  }
}

/// Why a model cannot answer: a code to compare and log, and the reason in
/// words.
///
/// A struct with static members, not an enum, so that a release can add
/// reasons without breaking an app's exhaustive `switch` (as `FinishReason`
/// here and FirebaseAI's reason types do). Match a reason as an enum case,
/// `case .unavailable(.modelNotReady)` (it is `Equatable`), and end with a
/// case that takes any other. Two reasons are equal when their codes are;
/// the words are for people and may be reworded.
public struct UnavailableReason: Sendable, Hashable, CustomStringConvertible {
  /// A stable name for the reason, the static member's (`"modelNotReady"`).
  public let code: String
  /// The reason in words.
  public let description: String

  /// A reason by its code and words: one of the library's (the static
  /// members) or a backend's own, for a `LanguageModel` the library does not
  /// ship.
  public init(code: String, description: String) {
    self.code = code
    self.description = description
  }

  /// Whether two reasons have the same code.
  public static func == (lhs: UnavailableReason, rhs: UnavailableReason) -> Bool { lhs.code == rhs.code }

  /// Hashes the code, as `==` compares it.
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }

  /// llama.cpp cannot run here: the CPU lacks what the build needs, or memory
  /// is too small for the model.
  public static let deviceNotEligible = UnavailableReason(
    code: "deviceNotEligible", description: "the device is not eligible for on-device inference")
  /// On-device inference is switched off by the app or the user
  /// (`HYBRID_INFERENCE_DISABLE_LOCAL=1`).
  public static let localInferenceNotEnabled = UnavailableReason(
    code: "localInferenceNotEnabled", description: "on-device inference is switched off")
  /// The model file is missing, incomplete or not a GGUF file.
  public static let modelNotReady = UnavailableReason(
    code: "modelNotReady", description: "the on-device model file is missing or not ready")
  /// No API key: none given and none in the backend's environment variable
  /// (`GEMINI_API_KEY` or `GOOGLE_API_KEY` for `CloudGeminiModel`,
  /// `OPENAI_API_KEY` for an `OpenAICompatibleModel` that needs one).
  public static let missingAPIKey = UnavailableReason(
    code: "missingAPIKey",
    description:
      "no API key is set (GEMINI_API_KEY or GOOGLE_API_KEY for Gemini, OPENAI_API_KEY for an OpenAI-compatible server)"
  )
  /// The server's base URL is not an http(s) URL with a host (a remote
  /// backend such as `OpenAICompatibleModel`).
  public static let invalidBaseURL = UnavailableReason(
    code: "invalidBaseURL", description: "the server's base URL is not a usable http(s) URL")
  /// No credential a Vertex AI model can use: none given as
  /// `authorization:` (a Gemini API key is never sent to Vertex AI).
  public static let missingCredential = UnavailableReason(
    code: "missingCredential",
    description:
      "no credential for Vertex AI (pass authorization: .bearerToken or .metadataServer; Gemini API keys are not sent there)"
  )
  /// No Google Cloud project for a Vertex AI model: none given in
  /// `.vertexAI(project:)` and none in `GOOGLE_CLOUD_PROJECT`.
  public static let missingProject = UnavailableReason(
    code: "missingProject",
    description: "no Google Cloud project (pass .vertexAI(project:) or set GOOGLE_CLOUD_PROJECT)")
}
