/// Folds the deltas of a stream into the response so far.
///
/// Text parts that follow each other are joined (answer text and thoughts kept
/// apart); other parts are appended; the latest finish reason, usage and
/// metadata win, as in the REST API's own streaming semantics.
struct ResponseAccumulator: Sendable {
  private(set) var response: GenerateContentResponse?

  var text: String { response?.text ?? "" }

  mutating func add(_ delta: GenerateContentResponse) {
    guard var merged = response else {
      response = delta
      return
    }
    if !delta.modelVersion.isEmpty { merged.modelVersion = delta.modelVersion }
    merged.responseId = delta.responseId ?? merged.responseId
    merged.usageMetadata = delta.usageMetadata ?? merged.usageMetadata
    merged.promptFeedback = delta.promptFeedback ?? merged.promptFeedback
    merged.localModelName = delta.localModelName ?? merged.localModelName
    for (position, candidate) in delta.candidates.enumerated() {
      let index = candidate.index ?? position
      if let existing = merged.candidates.firstIndex(where: { ($0.index ?? 0) == index }) {
        merged.candidates[existing] = Self.merge(merged.candidates[existing], candidate)
      } else {
        merged.candidates.append(candidate)
      }
    }
    response = merged
  }

  private static func merge(_ old: Candidate, _ new: Candidate) -> Candidate {
    var merged = old
    if let newContent = new.content {
      var content = old.content ?? Content(role: newContent.role, parts: [])
      for part in newContent.parts { append(part, to: &content.parts) }
      merged.content = content
    }
    merged.finishReason = new.finishReason ?? old.finishReason
    merged.finishMessage = new.finishMessage ?? old.finishMessage
    merged.safetyRatings = new.safetyRatings ?? old.safetyRatings
    merged.groundingMetadata = new.groundingMetadata ?? old.groundingMetadata
    merged.urlContextMetadata = new.urlContextMetadata ?? old.urlContextMetadata
    merged.avgLogprobs = new.avgLogprobs ?? old.avgLogprobs
    merged.tokenCount = new.tokenCount ?? old.tokenCount
    if let sources = new.citationMetadata?.citationSources {
      let known = old.citationMetadata?.citationSources ?? []
      merged.citationMetadata = CitationMetadata(citationSources: known + sources)
    }
    return merged
  }

  /// Joins a text part onto a preceding text part of the same kind; anything
  /// else becomes a part of its own.
  private static func append(_ part: Part, to parts: inout [Part]) {
    guard let text = part.text, let last = parts.last, let lastText = last.text,
      Self.isPlainText(part), Self.isPlainText(last), (last.thought ?? false) == (part.thought ?? false),
      last.thoughtSignature == nil
    else {
      parts.append(part)
      return
    }
    parts[parts.count - 1].text = lastText + text
    parts[parts.count - 1].thoughtSignature = part.thoughtSignature
  }

  private static func isPlainText(_ part: Part) -> Bool {
    part.inlineData == nil && part.fileData == nil && part.functionCall == nil
      && part.functionResponse == nil && part.executableCode == nil
      && part.codeExecutionResult == nil
  }
}
