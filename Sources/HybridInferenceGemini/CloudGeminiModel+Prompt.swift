import HybridInferenceCore

extension CloudGeminiModel {
  /// How many tokens `prompt` (its text, then its attachments) takes as a
  /// single user prompt, from `:countTokens`. A malformed attachment is
  /// `invalidAttachment` and inline media over the limit `requestTooLarge`,
  /// as for a request; nothing is sent then.
  public func countTokens(_ prompt: Prompt) async throws -> Int {
    try prompt.validate()
    return try await countTokens(Transcript(entries: [.prompt(prompt)]))
  }
}
