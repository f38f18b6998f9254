import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Time to first token over the turns of one conversation, with the KV cache
/// kept between turns (one session) and without it (every turn re-prefilled).
enum MultiTurn {
  static let questions = [
    "Which city is the capital of France?", "What river runs through it?",
    "Name a famous museum there.", "What is displayed in it?", "Who painted the Mona Lisa?",
    "When did he live?", "What else did he design?", "Summarise our conversation.",
  ]

  static let options = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 48))

  /// Seconds to the first snapshot, for each turn, in one session.
  static func withReuse(model: LocalSystemModel) async throws -> [Double] {
    let session = GenerativeModelSession(model: model, instructions: "Answer briefly.", logHandler: .silent)
    var times: [Double] = []
    for question in questions {
      let start = ContinuousClock.now
      var firstAt: ContinuousClock.Instant?
      for try await _ in session.streamResponse(to: question, options: options) where firstAt == nil {
        firstAt = .now
      }
      times.append(((firstAt ?? .now) - start).seconds)
    }
    return times
  }

  /// The same turns, each asked with the whole transcript of a model value
  /// of its own (so a fresh context and KV cache): nothing is reused.
  static func withoutReuse(model: LocalSystemModel) async throws -> [Double] {
    var transcript = Transcript(instructions: "Answer briefly.")
    var times: [Double] = []
    for question in questions {
      transcript.entries.append(.prompt(question))
      let request = ModelRequest(transcript: transcript, options: options.scopedForDevice)
      let start = ContinuousClock.now
      var firstAt: ContinuousClock.Instant?
      var answer = ""
      let coldModel = LocalSystemModel(modelPath: model.modelPath, contextSize: model.contextSize)
      for try await delta in coldModel.streamResponse(to: request) {
        if firstAt == nil { firstAt = .now }
        answer += delta.text
      }
      times.append(((firstAt ?? .now) - start).seconds)
      transcript.entries.append(.response(Content(text: answer), modelVersion: model.modelVersion))
    }
    return times
  }
}

extension HybridGenerationOptions {
  fileprivate var scopedForDevice: HybridGenerationOptions { .foundationModels(foundationModels ?? .init()) }
}
