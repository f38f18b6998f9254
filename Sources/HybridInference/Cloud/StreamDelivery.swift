/// What every cloud backend does with the decoded deltas of one stream
/// attempt: checks each, holds back the ones without content until content
/// arrives, and checks the whole answer at the end.
///
/// Why hold back: an attempt that failed before delivering any content can
/// be retried (`RetryLoop`) without the caller seeing anything twice; once
/// content has reached the caller, a failure ends the stream instead
/// (`DeliveredStreamFailure`). Shared so that every backend's streams keep
/// that promise the same way.
struct StreamDelivery {
  let continuation: ResponseDeltaStream.Continuation
  private var accumulator = ResponseAccumulator()
  private var heldBack: [GenerateContentResponse] = []
  private var eventCount = 0
  /// Whether any content has reached the caller (a failure is then final).
  private(set) var deliveredContent = false

  init(continuation: ResponseDeltaStream.Continuation) {
    self.continuation = continuation
  }

  /// Checks one delta (a blocked prompt, a stop for policy) and passes it on,
  /// or holds it back while no content has been delivered.
  mutating func deliver(_ delta: GenerateContentResponse) throws {
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

  /// The stream ended well: checks that it said something, and passes on
  /// what was held back.
  mutating func finish() throws {
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
    for held in heldBack { continuation.yield(held) }
    heldBack.removeAll()
  }
}
