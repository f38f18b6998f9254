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
  /// point it at a closed loopback port); with `--vertex-project` or
  /// `--vertex-location`, that model on Vertex AI (`GOOGLE_VERTEX_BASE_URL`
  /// overrides the host).
  static func make(options: ChatOptions, logHandler: LogHandler) -> any LanguageModel {
    if let server = options.server, let baseURL = URL(string: server) {
      return OpenAICompatibleModel(
        name: options.serverModel ?? ChatOptions.defaultServerModel, baseURL: baseURL, apiKey: nil,
        logHandler: logHandler)
    }
    if options.usesVertexAI {
      return CloudGeminiModel(
        name: options.cloudModel,
        backend: .vertexAI(project: options.vertexProject, location: options.vertexLocation),
        authorization: vertexCredential(environment: ProcessInfo.processInfo.environment),
        logHandler: logHandler)
    }
    return CloudGeminiModel(name: options.cloudModel, logHandler: logHandler)
  }

  /// With `--vertex-project`: the access token in `GOOGLE_OAUTH_ACCESS_TOKEN`
  /// (`gcloud auth print-access-token`; the name Google's Terraform provider
  /// reads), else the metadata server's (on Compute Engine, GKE, Cloud Run).
  static func vertexCredential(environment: [String: String]) -> Credential {
    if let token = environment["GOOGLE_OAUTH_ACCESS_TOKEN"], !token.isEmpty {
      return .bearerToken { token }
    }
    return .metadataServer
  }
}
