import HybridInferenceCore

/// What every cloud backend does with the decoded deltas of one stream
/// attempt: checks each, holds back the ones without content until content
/// arrives, and checks the whole answer at the end.
///
/// Why hold back: an attempt that failed before delivering any content can
/// be retried (`RetryLoop`) without the caller seeing anything twice; once
/// content has reached the caller, a failure ends the stream instead
/// (`DeliveredStreamFailure`). Shared so that every backend's streams keep
/// that promise the same way.
package struct StreamDelivery {
  let continuation: ResponseDeltaStream.Continuation
  private var accumulator = ResponseAccumulator()
  private var heldBack: [GenerateContentResponse] = []
  private var eventCount = 0
  /// Whether any content has reached the caller (a failure is then final).
  package private(set) var deliveredContent = false

  package init(continuation: ResponseDeltaStream.Continuation) {
    self.continuation = continuation
  }

  /// Checks one delta (a blocked prompt, a stop for policy) and passes it on,
  /// or holds it back while no content has been delivered.
  package mutating func deliver(_ delta: GenerateContentResponse) throws {
    eventCount += 1
    accumulator.add(delta)
    if let accumulated = accumulator.response {
      try ResponseChecks.checkDelta(delta, accumulated: accumulated)
    }
    let hasContent = delta.candidates.contains { !($0.content?.parts.isEmpty ?? true) }
    guard hasContent || deliveredContent else {
      heldBack.append(delta)
      return
    }
    for held in heldBack { continuation.yield(held) }
    heldBack.removeAll()
    continuation.yield(delta)
    deliveredContent = true
  }

  /// The body ended cleanly: checks that the stream said something and came
  /// to its end, and passes on what was held back.
  ///
  /// A stream comes to its end when every candidate has a finish reason, or
  /// when the protocol's own end marker arrived (`data: [DONE]` for an
  /// OpenAI-compatible server; Gemini has none). Without either, something
  /// between here and the server (a proxy, a load balancer) closed it early
  /// at an event boundary: `.responseTruncated`, with what arrived, rather
  /// than a cut answer passed off as a whole one. An answer with nothing in
  /// it at all is `.malformedResponse` first (the empty-answer rule).
  /// - Parameter sawEndMarker: Whether the protocol's end marker arrived.
  package mutating func finish(sawEndMarker: Bool = false) throws {
    guard eventCount > 0, let accumulated = accumulator.response else {
      throw HybridInferenceError.malformedResponse("the stream ended without an event")
    }
    if accumulated.candidates.isEmpty {
      if accumulated.promptFeedback != nil {
        throw HybridInferenceError.promptBlocked(reason: nil, response: accumulated)
      }
      throw HybridInferenceError.malformedResponse("the stream ended without a candidate")
    }
    try ResponseChecks.checkNotEmpty(accumulated)
    if !sawEndMarker, accumulated.candidates.contains(where: { $0.finishReason == nil }) {
      throw HybridInferenceError.responseTruncated(response: accumulated)
    }
    for held in heldBack { continuation.yield(held) }
    heldBack.removeAll()
  }
}
