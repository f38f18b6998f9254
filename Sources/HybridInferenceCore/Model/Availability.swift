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

/// Why a model cannot answer. Match it with a default case: more may come.
public enum UnavailableReason: Sendable, Hashable, CustomStringConvertible {
  /// llama.cpp cannot run here: the CPU lacks what the build needs, or memory
  /// is too small for the model.
  case deviceNotEligible
  /// On-device inference is switched off by the app or the user
  /// (`HYBRID_INFERENCE_DISABLE_LOCAL=1`).
  case localInferenceNotEnabled
  /// The model file is missing, incomplete or not a GGUF file.
  case modelNotReady
  /// No API key: none given and none in the backend's environment variable
  /// (`GEMINI_API_KEY` or `GOOGLE_API_KEY` for `CloudGeminiModel`,
  /// `OPENAI_API_KEY` for an `OpenAICompatibleModel` that needs one).
  case missingAPIKey
  /// The server's base URL is not an http(s) URL with a host (a remote
  /// backend such as `OpenAICompatibleModel`).
  case invalidBaseURL
  /// No credential a Vertex AI model can use: none given as
  /// `authorization:` (a Gemini API key is never sent to Vertex AI).
  case missingCredential
  /// No Google Cloud project for a Vertex AI model: none given in
  /// `.vertexAI(project:)` and none in `GOOGLE_CLOUD_PROJECT`.
  case missingProject

  /// The reason in words.
  public var description: String {
    switch self {
    case .deviceNotEligible: "the device is not eligible for on-device inference"
    case .localInferenceNotEnabled: "on-device inference is switched off"
    case .modelNotReady: "the on-device model file is missing or not ready"
    case .missingAPIKey:
      "no API key is set (GEMINI_API_KEY or GOOGLE_API_KEY for Gemini, OPENAI_API_KEY for an OpenAI-compatible server)"
    case .invalidBaseURL: "the server's base URL is not a usable http(s) URL"
    case .missingCredential:
      "no credential for Vertex AI (pass authorization: .bearerToken or .metadataServer; Gemini API keys are not sent there)"
    case .missingProject: "no Google Cloud project (pass .vertexAI(project:) or set GOOGLE_CLOUD_PROJECT)"
    }
  }
}
