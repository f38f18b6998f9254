@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Checks its base's answers against the request's schema, as the device
/// does before it hands an answer over (so a hybrid can fall back on it).
struct SchemaCheckingModel: LanguageModel {
  let base: ScriptedModel
  var modelVersion: String { base.modelVersion }
  var placement: ModelPlacement { .onDevice }
  var availability: Availability { .available }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    .producing { continuation in
      let raw = try await base.respond(to: request)
      if let schema = request.responseSchema { _ = try schema.check(raw.text) }
      continuation.yield(raw)
    }
  }
}
