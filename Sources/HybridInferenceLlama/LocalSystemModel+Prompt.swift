import HybridInferenceCore

extension LocalSystemModel {
  /// The number of tokens `prompt`'s text takes (`countTokens(_:)` of a
  /// string). The device reads no media: a prompt with attachments is
  /// `unsupportedRequest`, as a request with them would be.
  public func countTokens(_ prompt: Prompt) async throws -> Int {
    try prompt.validate()
    guard prompt.attachments.isEmpty else {
      throw HybridInferenceError.unsupportedRequest(
        "the on-device model reads text only; the prompt has \(prompt.attachments.count) attachment(s)")
    }
    return try await countTokens(prompt.text)
  }
}
