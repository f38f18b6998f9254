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

  /// The body ended where its framing says it ends: checks that the stream
  /// said something and came to its end, and passes on what was held back.
  ///
  /// Whether an answer is whole is the transport's to say. A body that ended
  /// properly (its last chunk, its whole `Content-Length`, or a clean close
  /// of a body that runs until the connection closes) is the whole answer,
  /// whether or not its last event has a finish reason: Gemini has no end
  /// marker, Vertex AI ends streams without a finish reason, and Firebase
  /// reads those as answers. A body cut short never gets here: the transport
  /// throws (`.connectionLost`). A protocol with an end marker of its own
  /// (`data: [DONE]` of an OpenAI-compatible server) is also judged by it:
  /// neither the marker nor a finish reason means something between here and
  /// the server (a proxy, a load balancer) closed it at an event boundary,
  /// `.responseTruncated` with what arrived. An answer with nothing in it at
  /// all is `.malformedResponse` first (the empty-answer rule).
  /// - Parameter sawEndMarker: Whether the protocol's end marker arrived;
  ///   nil for a protocol that has none.
  package mutating func finish(sawEndMarker: Bool? = nil) throws {
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
    if sawEndMarker == false, accumulated.candidates.contains(where: { $0.finishReason == nil }) {
      throw HybridInferenceError.responseTruncated(response: accumulated)
    }
    for held in heldBack { continuation.yield(held) }
    heldBack.removeAll()
  }
}
