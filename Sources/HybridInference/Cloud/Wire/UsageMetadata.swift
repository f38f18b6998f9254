/// Token counts of one response (REST `UsageMetadata`).
///
/// The on-device model fills in `promptTokenCount`, `candidatesTokenCount` and
/// `totalTokenCount` too, which Firebase does not do on device.
public struct UsageMetadata: Sendable, Hashable, Codable {
  public var promptTokenCount: Int?
  public var cachedContentTokenCount: Int?
  public var candidatesTokenCount: Int?
  public var toolUsePromptTokenCount: Int?
  public var thoughtsTokenCount: Int?
  public var totalTokenCount: Int?
  public var promptTokensDetails: [ModalityTokenCount]?
  public var candidatesTokensDetails: [ModalityTokenCount]?

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
    public var modality: String
    public var tokenCount: Int?
    public init(modality: String, tokenCount: Int? = nil) {
      self.modality = modality
      self.tokenCount = tokenCount
    }
  }
}
