import Foundation
import HybridInference

/// Builds the cloud model that `--cloud-model` names.
///
/// The one place that knows the cloud model's type. `CloudGeminiModel` is not
/// on this branch yet; until it is, a stand-in keeps the same availability
/// rules (a key from `GEMINI_API_KEY`, then `GOOGLE_API_KEY`) and says so when
/// asked to answer. Wiring the real model means replacing `make`'s body with
/// `CloudGeminiModel(name: name, logHandler: logHandler)` and deleting the stand-in.
enum CloudModelFactory {
  static func make(name: String, logHandler: LogHandler) -> any LanguageModel {
    PendingCloudModel(name: name, environment: ProcessInfo.processInfo.environment)
  }
}

/// Stands in for `CloudGeminiModel` until it is merged.
private struct PendingCloudModel: LanguageModel {
  let name: String
  let hasKey: Bool

  init(name: String, environment: [String: String]) {
    self.name = name
    self.hasKey = ["GEMINI_API_KEY", "GOOGLE_API_KEY"].contains { !(environment[$0] ?? "").isEmpty }
  }

  var modelVersion: String { name }
  var placement: ModelPlacement { .cloud }
  var availability: Availability { hasKey ? .available : .unavailable(.missingAPIKey) }

  func streamResponse(to request: ModelRequest)
    -> AsyncThrowingStream<GenerateContentResponse, any Error>
  {
    AsyncThrowingStream {
      $0.finish(
        throwing: HybridInferenceError.unsupportedRequest(
          "this build of hybrid-chat has no cloud client yet"))
    }
  }
}
