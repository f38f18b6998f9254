/// Token counts of one response (REST `UsageMetadata`).
///
/// The on-device model fills in `promptTokenCount`, `candidatesTokenCount` and
/// `totalTokenCount` too, which Firebase does not do on device.
public struct UsageMetadata: Sendable, Hashable, Codable {
  /// Tokens in the prompt (cached ones included).
  public var promptTokenCount: Int?
  /// Prompt tokens served from the context cache.
  public var cachedContentTokenCount: Int?
  /// Tokens in the answer.
  public var candidatesTokenCount: Int?
  /// Tokens of tool results fed back to the model.
  public var toolUsePromptTokenCount: Int?
  /// Tokens spent thinking.
  public var thoughtsTokenCount: Int?
  /// Everything billed for the request.
  public var totalTokenCount: Int?
  /// Prompt tokens by modality.
  public var promptTokensDetails: [ModalityTokenCount]?
  /// Answer tokens by modality.
  public var candidatesTokensDetails: [ModalityTokenCount]?

  /// Token counts.
  public init(
    promptTokenCount: Int? = nil, cachedContentTokenCount: Int? = nil,
    candidatesTokenCount: Int? = nil, toolUsePromptTokenCount: Int? = nil,
    thoughtsTokenCount: Int? = nil, totalTokenCount: Int? = nil,
    promptTokensDetails: [ModalityTokenCount]? = nil,
    candidatesTokensDetails: [ModalityTokenCount]? = nil
  ) {
    self.promptTokenCount = promptTokenCount
    self.cachedContentTokenCount = cachedContentTokenCount
    self.candidatesTokenCount = candidatesTokenCount
    self.toolUsePromptTokenCount = toolUsePromptTokenCount
    self.thoughtsTokenCount = thoughtsTokenCount
    self.totalTokenCount = totalTokenCount
    self.promptTokensDetails = promptTokensDetails
    self.candidatesTokensDetails = candidatesTokensDetails
  }

  /// Tokens of one modality.
  public struct ModalityTokenCount: Sendable, Hashable, Codable {
    /// `TEXT`, `IMAGE`, `AUDIO` or `VIDEO`.
    public var modality: String
    /// Tokens of that modality.
    public var tokenCount: Int?
    /// A count for one modality.
    public init(modality: String, tokenCount: Int? = nil) {
      self.modality = modality
      self.tokenCount = tokenCount
    }
  }
}
