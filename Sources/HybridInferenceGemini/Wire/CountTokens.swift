import HybridInferenceCore
import HybridInferenceRemote

/// The body of `:countTokens` (REST `CountTokensRequest`).
///
/// The API takes either bare `contents` or a whole `generateContentRequest`,
/// never both. Only the second form carries a system instruction, so it is
/// used when the transcript has instructions; otherwise the simpler form is.
struct CountTokensRequest: Sendable, Hashable, Encodable {
  var contents: [Content]?
  var generateContentRequest: Wrapped?

  /// A `GenerateContentRequest` named with its model, as countTokens wants it.
  struct Wrapped: Sendable, Hashable, Encodable {
    var model: String
    var contents: [Content]
    var systemInstruction: Content?
    var generationConfig: GenerationConfig?
    var safetySettings: [SafetySetting]?
  }

  init(transcript: Transcript, modelPath: String) {
    let request = GenerateContentRequest(
      transcript: transcript, generationConfig: nil, safetySettings: nil)
    if let systemInstruction = request.systemInstruction {
      generateContentRequest = Wrapped(
        model: modelPath, contents: request.contents, systemInstruction: systemInstruction)
    } else {
      contents = request.contents
    }
  }
}

/// The answer of `:countTokens` (REST `CountTokensResponse`).
struct CountTokensResponse: Sendable, Hashable, Decodable {
  var totalTokens: Int
  var cachedContentTokenCount: Int?
}
