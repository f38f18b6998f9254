import HybridInferenceCore

/// Decides when a well-formed answer is still a failure: a blocked prompt, an
/// answer stopped for policy, or an answer with nothing in it.
///
/// A stop for policy (`FinishReason.isStoppedByPolicy`: SAFETY, RECITATION,
/// OTHER, any reason this library does not know, ...) is an error even when the candidate has text. That text was
/// cut off or withheld mid-way, and returning it as a normal answer would
/// hide that; the error's `response` still carries it for an app that wants
/// to show it. In a stream the text before the stop has already reached the
/// caller as snapshots; the stream then ends with the error.
package enum ResponseChecks {
  /// Checks a complete (unary) response.
  package static func checkComplete(_ response: GenerateContentResponse) throws(HybridInferenceError) {
    try checkDelta(response, accumulated: response)
    guard !response.candidates.isEmpty else {
      // A prompt-feedback-only answer is a block even without a reason.
      if response.promptFeedback != nil {
        throw .promptBlocked(reason: nil, response: response)
      }
      throw .malformedResponse("the response has no candidates")
    }
    try checkNotEmpty(response)
  }

  /// Throws `.malformedResponse` when no candidate holds anything an app
  /// could use: no part, no finish reason, no citation, grounding or URL
  /// context metadata (`"content": {}` or a content without `parts`).
  ///
  /// This is the Firebase SDK's rule for a complete answer. In a stream it
  /// applies to the accumulated answer at the end, so an empty event between
  /// text events is fine. An answer with no parts but a finish reason (a
  /// thinking model cut off at MAX_TOKENS before any text) passes: it is a
  /// real, empty answer, and the request encoder never sends such a turn back.
  static func checkNotEmpty(_ response: GenerateContentResponse) throws(HybridInferenceError) {
    guard response.candidates.allSatisfy(\.isEmpty) else { return }
    throw .malformedResponse("the answer has no content and no finish reason")
  }

  /// Checks one stream event, with the response so far (event included) to
  /// attach to the error.
  static func checkDelta(
    _ delta: GenerateContentResponse, accumulated: GenerateContentResponse
  ) throws(HybridInferenceError) {
    if let reason = delta.promptFeedback?.blockReason {
      throw .promptBlocked(reason: reason, response: accumulated)
    }
    if let reason = delta.candidates.first?.finishReason, reason.isStoppedByPolicy {
      throw .responseStopped(reason: reason, response: accumulated)
    }
  }
}
