import HybridInference

/// Builds the cloud model that `--cloud-model` names: the one place that
/// knows the cloud model's type.
enum CloudModelFactory {
  /// A Gemini model with its key from `GEMINI_API_KEY`, then `GOOGLE_API_KEY`,
  /// and its server from `GOOGLE_GEMINI_BASE_URL` when set (what the tests
  /// use to point it at a closed loopback port).
  static func make(name: String, logHandler: LogHandler) -> any LanguageModel {
    CloudGeminiModel(name: name, logHandler: logHandler)
  }
}
