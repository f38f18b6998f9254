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
  /// Why a hybrid answered from its other model (a fallback, or a hedge its
  /// secondary won); nil when the model asked first answered. With nested
  /// hybrids, the reason of the one nearest the answering model. Not part of
  /// the REST encoding.
  public var fallbackReason: FallbackReason?
  /// The model that began this answer when another one finished it
  /// (`HybridModel.continuesInterruptedAnswers`): the `modelVersion` of its
  /// deltas; `modelVersion` names the one that finished. Not part of the
  /// REST encoding.
  public var continuedFrom: String?
  /// Where the answer was made: `.onDevice` or `.cloud`, on every response
  /// and every streamed delta and snapshot. Not part of the REST encoding
  /// (a decoded response says `.cloud` until the library stamps it). A
  /// backend may set it; the library otherwise fills it in from the
  /// `LanguageModel.placement` of the model that answered (see `ModelCall`).
  public var placement: ModelPlacement {
    get { knownPlacement ?? .cloud }
    set { knownPlacement = newValue }
  }
  /// The placement as set, nil until a backend or the library sets it.
  var knownPlacement: ModelPlacement?
  /// The backend and model that wrote this answer, as far as its thought
  /// signatures are concerned: for Gemini the model's endpoint without
  /// credentials (`https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-flash-lite`),
  /// nil for backends that make no signatures. The session records it on the
  /// transcript entry (`Transcript.Entry.producer`), and signatures go back
  /// only to the same producer. Not part of the REST encoding.
  public var producer: String?

  /// A response; `modelVersion` names the model that answered, `producer`
  /// where its thought signatures are valid (nil for a backend without them).
  public init(
    candidates: [Candidate] = [], promptFeedback: PromptFeedback? = nil,
    usageMetadata: UsageMetadata? = nil, modelVersion: String, responseId: String? = nil,
    localModelName: String? = nil, producer: String? = nil
  ) {
    self.candidates = candidates
    self.promptFeedback = promptFeedback
    self.usageMetadata = usageMetadata
    self.modelVersion = modelVersion
    self.responseId = responseId
    self.localModelName = localModelName
    self.producer = producer
  }

  /// The answer text of the first candidate, thoughts excluded.
  public var text: String { candidates.first?.content?.text ?? "" }

  /// The thought summaries of the first candidate.
  public var thoughtText: String { candidates.first?.content?.thoughtText ?? "" }

  /// The first candidate's finish reason.
  public var finishReason: FinishReason? { candidates.first?.finishReason }

  /// The REST fields; `placement` and `producer` are the library's own and never encoded.
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
