/// Folds the deltas of a stream into the response so far.
///
/// Text parts that follow each other are joined (answer text and thoughts kept
/// apart); other parts are appended; the latest finish reason, usage and
/// metadata win, as in the REST API's own streaming semantics.
///
/// A delta costs what it adds: the response is mutated in place, and a text
/// part grows by appending to its string, which Swift does without copying
/// while the string's buffer is not shared. A caller that still holds an
/// earlier `response` (a snapshot) shares that buffer, and the next append
/// copies it once; the session therefore makes snapshots only when its caller
/// asks for one (`StreamedTurn`).
package struct ResponseAccumulator: Sendable {
  private var merged = GenerateContentResponse(modelVersion: "")
  private var started = false

  /// Whether the first candidate has asked for a function call so far.
  private(set) var hasFunctionCalls = false

  package init() {}

  /// The response so far; nil before the first delta.
  package var response: GenerateContentResponse? { started ? merged : nil }

  /// The whole response once `modelVersion`'s answer has ended: what every
  /// `respond` that gathers deltas returns. Throws `CancellationError` when
  /// the calling task was cancelled (the answer may have ended early for
  /// it), `malformedResponse` when no delta came.
  package func finished(by modelVersion: String) throws -> GenerateContentResponse {
    try Task.checkCancellation()
    guard let response else {
      throw HybridInferenceError.malformedResponse("\(modelVersion) ended without a response")
    }
    return response
  }

  /// Adds `delta` and returns the answer text it added to the first
  /// candidate (thoughts excluded): what `response.text` grew by.
  @discardableResult
  package mutating func add(_ delta: GenerateContentResponse) -> String {
    guard started else {
      started = true
      merged = delta
      hasFunctionCalls = !delta.functionCalls.isEmpty
      return delta.text
    }
    if !delta.modelVersion.isEmpty { merged.modelVersion = delta.modelVersion }
    if let responseId = delta.responseId { merged.responseId = responseId }
    if let usage = delta.usageMetadata { merged.usageMetadata = usage }
    if let feedback = delta.promptFeedback { merged.promptFeedback = feedback }
    if let name = delta.localModelName { merged.localModelName = name }
    if let reason = delta.fallbackReason { merged.fallbackReason = reason }
    if let begun = delta.continuedFrom { merged.continuedFrom = begun }
    if let placement = delta.knownPlacement { merged.knownPlacement = placement }
    if let producer = delta.producer { merged.producer = producer }
    var added = ""
    for (position, candidate) in delta.candidates.enumerated() {
      let index = candidate.index ?? position
      let target: Int
      if let existing = merged.candidates.firstIndex(where: { ($0.index ?? 0) == index }) {
        Self.merge(candidate, into: &merged.candidates[existing])
        target = existing
      } else {
        merged.candidates.append(candidate)
        target = merged.candidates.count - 1
      }
      // `response.text` and `functionCalls` read the first candidate.
      guard target == 0, let parts = candidate.content?.parts else { continue }
      for part in parts {
        if part.thought != true, let text = part.text { added += text }
        if part.functionCall != nil { hasFunctionCalls = true }
      }
    }
    return added
  }

  /// Merges `new` into `old` in place.
  private static func merge(_ new: Candidate, into old: inout Candidate) {
    if let newContent = new.content {
      if old.content == nil { old.content = Content(role: newContent.role, parts: []) }
      for part in newContent.parts { old.content?.parts.appendJoiningText(part) }
    }
    if let reason = new.finishReason { old.finishReason = reason }
    if let message = new.finishMessage { old.finishMessage = message }
    if let ratings = new.safetyRatings { old.safetyRatings = ratings }
    if let grounding = new.groundingMetadata { old.groundingMetadata = grounding }
    if let urlContext = new.urlContextMetadata { old.urlContextMetadata = urlContext }
    if let logprobs = new.avgLogprobs { old.avgLogprobs = logprobs }
    if let tokens = new.tokenCount { old.tokenCount = tokens }
    if let sources = new.citationMetadata?.citationSources {
      if old.citationMetadata == nil { old.citationMetadata = CitationMetadata(citationSources: []) }
      old.citationMetadata?.citationSources.append(contentsOf: sources)
    }
  }
}

extension [Part] {
  /// Joins a text part onto a preceding text part of the same kind, by
  /// appending in place; anything else becomes a part of its own.
  fileprivate mutating func appendJoiningText(_ part: Part) {
    let last = count - 1
    guard let text = part.text, last >= 0, self[last].text != nil, part.isPlainText, self[last].isPlainText,
      (self[last].thought ?? false) == (part.thought ?? false), self[last].thoughtSignature == nil
    else {
      append(part)
      return
    }
    self[last].text?.append(text)
    self[last].thoughtSignature = part.thoughtSignature
  }
}

extension Part {
  /// Text and nothing else (thought flags and signatures aside).
  fileprivate var isPlainText: Bool {
    inlineData == nil && fileData == nil && functionCall == nil && functionResponse == nil
      && executableCode == nil && codeExecutionResult == nil
  }
}
