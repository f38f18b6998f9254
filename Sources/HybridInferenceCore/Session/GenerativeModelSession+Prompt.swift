extension GenerativeModelSession {
  /// Answers `prompt` (text and attachments) in one piece and adds both to
  /// the transcript, the attachments kept as the parts they were sent as.
  ///
  /// As `respond(to:options:)` with a string; a prompt with neither text
  /// nor attachments is `emptyPrompt`, a malformed attachment
  /// `invalidAttachment`, both before anything is sent. A device that cannot
  /// read the attachments throws `unsupportedRequest`, so prefer-on-device
  /// answers from the cloud, attachments and all (see `Attachment`).
  public func respond(to prompt: Prompt, options: HybridGenerationOptions = .default)
    async throws -> Response
  {
    let (raw, text) = try await answer(prompt: prompt, options: options, schema: nil)
    return Response(content: text, rawResponse: raw)
  }

  /// Answers `prompt` (text and attachments) as snapshots of the text so
  /// far; as `streamResponse(to:options:)` with a string.
  public func streamResponse(to prompt: Prompt, options: HybridGenerationOptions = .default)
    -> ResponseStream
  {
    stream(prompt: prompt, options: options, schema: nil)
  }

  /// Answers `prompt` (text and attachments) with a value of `type`; as
  /// `respond(to:generating:options:)` with a string.
  public func respond<Content: Generable>(
    to prompt: Prompt, generating type: Content.Type = Content.self,
    options: HybridGenerationOptions = .default
  ) async throws -> StructuredResponse<Content> {
    let raw = try await exchange(prompt: prompt, options: options, schema: type.generationSchema)
    return try StructuredResponse(decoding: type, from: raw)
  }

  /// Answers `prompt` (text and attachments) with JSON that follows
  /// `schema`; as `respond(to:schema:options:)` with a string.
  public func respond(
    to prompt: Prompt, schema: GenerationSchema, options: HybridGenerationOptions = .default
  ) async throws -> StructuredResponse<JSONValue> {
    let raw = try await exchange(prompt: prompt, options: options, schema: schema)
    let value = try schema.check(raw.text)
    return StructuredResponse(content: value.jsonValue, jsonText: raw.text, rawResponse: raw)
  }

  /// Answers `prompt` (text and attachments) with a value of `type`, as
  /// snapshots of the object so far; as `streamResponse(to:generating:options:)`
  /// with a string.
  public func streamResponse<Content: Generable>(
    to prompt: Prompt, generating type: Content.Type = Content.self,
    options: HybridGenerationOptions = .default
  ) -> StructuredResponseStream<Content> {
    StructuredResponseStream(base: stream(prompt: prompt, options: options, schema: type.generationSchema))
  }
}
