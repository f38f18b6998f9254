/// A model's answer, in the shape of the REST `GenerateContentResponse`.
///
/// Both models report through this type, so an app reads one shape whichever
/// model answered; `modelVersion` says which one did. In a stream each event is
/// one of these (a delta) and the session accumulates them into snapshots.
public struct GenerateContentResponse: Sendable, Hashable, Codable {
  /// The candidate answers; normally one.
  public var candidates: [Candidate]
  /// Why the prompt was blocked, when it was.
  public var promptFeedback: PromptFeedback?
  /// Token counts.
  public var usageMetadata: UsageMetadata?
  /// The model that answered: a Gemini model name, or
  /// `LocalSystemModel.modelVersion` on device.
  public var modelVersion: String
  /// The server's id for this response (cloud only).
  public var responseId: String?
  /// The GGUF file's own name (`general.name`) when the on-device model answered.
  public var localModelName: String?

  /// A response; `modelVersion` names the model that answered.
  public init(
    candidates: [Candidate] = [], promptFeedback: PromptFeedback? = nil,
    usageMetadata: UsageMetadata? = nil, modelVersion: String, responseId: String? = nil,
    localModelName: String? = nil
  ) {
    self.candidates = candidates
    self.promptFeedback = promptFeedback
    self.usageMetadata = usageMetadata
    self.modelVersion = modelVersion
    self.responseId = responseId
    self.localModelName = localModelName
  }

  /// The answer text of the first candidate, thoughts excluded.
  public var text: String { candidates.first?.content?.text ?? "" }

  /// The thought summaries of the first candidate.
  public var thoughtText: String { candidates.first?.content?.thoughtText ?? "" }

  /// The first candidate's finish reason.
  public var finishReason: FinishReason? { candidates.first?.finishReason }

  enum CodingKeys: String, CodingKey {
    case candidates, promptFeedback, usageMetadata, modelVersion, responseId, localModelName
  }

  /// Decodes a response; a missing `modelVersion` is empty until the client fills it in.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    candidates = try container.decodeIfPresent([Candidate].self, forKey: .candidates) ?? []
    promptFeedback = try container.decodeIfPresent(PromptFeedback.self, forKey: .promptFeedback)
    usageMetadata = try container.decodeIfPresent(UsageMetadata.self, forKey: .usageMetadata)
    // Every real response names its model; the client fills in its own name
    // where a server leaves it out.
    modelVersion = try container.decodeIfPresent(String.self, forKey: .modelVersion) ?? ""
    responseId = try container.decodeIfPresent(String.self, forKey: .responseId)
    localModelName = try container.decodeIfPresent(String.self, forKey: .localModelName)
  }
}
