import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Builds the remote model: the one place that knows its type.
enum CloudModelFactory {
  /// With `--server`, an OpenAI-compatible model on that server (key from
  /// `OPENAI_API_KEY` when set); otherwise the Gemini model `--cloud-model`
  /// names, with its key from `GEMINI_API_KEY`, then `GOOGLE_API_KEY`, and its
  /// server from `GOOGLE_GEMINI_BASE_URL` when set (what the tests use to
  /// point it at a closed loopback port).
  static func make(options: ChatOptions, logHandler: LogHandler) -> any LanguageModel {
    if let server = options.server, let baseURL = URL(string: server) {
      return OpenAICompatibleModel(
        name: options.serverModel ?? ChatOptions.defaultServerModel, baseURL: baseURL, apiKey: nil,
        logHandler: logHandler)
    }
    return CloudGeminiModel(name: options.cloudModel, logHandler: logHandler)
  }
}
