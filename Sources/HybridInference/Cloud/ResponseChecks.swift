/// Decides when a well-formed answer is still a failure: a blocked prompt or
/// an answer stopped for policy.
///
/// A stop for policy (`FinishReason.isStoppedByPolicy`: SAFETY, RECITATION,
/// OTHER, ...) is an error even when the candidate has text. That text was
/// cut off or withheld mid-way, and returning it as a normal answer would
/// hide that; the error's `response` still carries it for an app that wants
/// to show it. In a stream the text before the stop has already reached the
/// caller as snapshots; the stream then ends with the error.
enum ResponseChecks {
  /// Checks a complete (unary) response.
  static func checkComplete(_ response: GenerateContentResponse) throws(HybridInferenceError) {
    try checkDelta(response, accumulated: response)
    guard !response.candidates.isEmpty else {
      // A prompt-feedback-only answer is a block even without a reason.
      if response.promptFeedback != nil {
        throw .promptBlocked(reason: nil, response: response)
      }
      throw .malformedResponse("the response has no candidates")
    }
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
