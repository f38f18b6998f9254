import Foundation

extension GenerativeModelSession {
  /// Answers `prompt` with a value of `type`, whose schema both models follow
  /// (Gemini's `responseJsonSchema` in the cloud, a grammar on device).
  ///
  /// The transcript records the answer as its JSON text, so a later turn, or
  /// the other model after a fallback, sees what was answered.
  /// - Throws: `HybridInferenceError.unsupportedSchema` when the type cannot
  ///   be described (before anything is sent); `.invalidStructuredOutput`
  ///   when the answer does not decode into it (on device, a hybrid has
  ///   already fallen back on it by then); every error `respond(to:)` throws.
  public func respond<Content: Generable>(
    to prompt: String, generating type: Content.Type = Content.self,
    options: HybridGenerationOptions = .default
  ) async throws -> StructuredResponse<Content> {
    try await respond(to: Prompt(prompt), generating: type, options: options)
  }

  /// Answers `prompt` with JSON that follows `schema`, for shapes known only
  /// at run time.
  /// - Throws: as `respond(to:generating:options:)`.
  public func respond(
    to prompt: String, schema: GenerationSchema, options: HybridGenerationOptions = .default
  ) async throws -> StructuredResponse<JSONValue> {
    try await respond(to: Prompt(prompt), schema: schema, options: options)
  }

  /// Answers `prompt` with a value of `type`, as snapshots of the object so
  /// far: each snapshot's `content` is valid JSON (unfinished strings closed,
  /// fields not yet started absent). `collect()` gives the decoded value.
  public func streamResponse<Content: Generable>(
    to prompt: String, generating type: Content.Type = Content.self,
    options: HybridGenerationOptions = .default
  ) -> StructuredResponseStream<Content> {
    streamResponse(to: Prompt(prompt), generating: type, options: options)
  }

  /// A structured answer.
  public struct StructuredResponse<Content: Sendable>: Sendable {
    /// The answer as a value.
    public let content: Content
    /// The answer as the model wrote it: JSON text.
    public let jsonText: String
    /// The model's full response; `modelVersion` names the model that answered.
    public let rawResponse: GenerateContentResponse

    /// A structured response from its parts.
    public init(content: Content, jsonText: String, rawResponse: GenerateContentResponse) {
      self.content = content
      self.jsonText = jsonText
      self.rawResponse = rawResponse
    }
  }
}

extension GenerativeModelSession.StructuredResponse where Content: Generable {
  /// Decodes the answer of `raw` into `type`.
  init(decoding type: Content.Type, from raw: GenerateContentResponse) throws(HybridInferenceError) {
    let text = raw.text
    do {
      self.init(content: try JSONDecoder().decode(type, from: Data(text.utf8)), jsonText: text, rawResponse: raw)
    } catch {
      throw .invalidStructuredOutput("the answer does not decode into \(type): \(error)")
    }
  }
}
