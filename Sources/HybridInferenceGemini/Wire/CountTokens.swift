import HybridInferenceCore
import HybridInferenceRemote

/// The body of `:countTokens` (REST `CountTokensRequest`).
///
/// The Gemini API takes either bare `contents` or a whole
/// `generateContentRequest`, never both. Only the second form carries a
/// system instruction, so it is used when the transcript has instructions;
/// otherwise the simpler form is. Vertex AI's `CountTokensRequest` has no
/// `generateContentRequest` and takes `systemInstruction` beside `contents`.
struct CountTokensRequest: Sendable, Hashable, Encodable {
  var contents: [Content]?
  var systemInstruction: Content?
  var generateContentRequest: Wrapped?

  /// A `GenerateContentRequest` named with its model, as countTokens wants it.
  struct Wrapped: Sendable, Hashable, Encodable {
    var model: String
    var contents: [Content]
    var systemInstruction: Content?
    var generationConfig: GenerationConfig?
    var safetySettings: [SafetySetting]?
  }

  /// `producer` as for `GenerateContentRequest`: signatures of other models are left out.
  init(transcript: Transcript, modelPath: String, vertex: Bool = false, producer: String? = nil) {
    let request = GenerateContentRequest(
      transcript: transcript, generationConfig: nil, safetySettings: nil, producer: producer)
    if vertex {
      contents = request.contents
      systemInstruction = request.systemInstruction
    } else if let systemInstruction = request.systemInstruction {
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
