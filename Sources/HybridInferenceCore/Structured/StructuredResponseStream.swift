/// The snapshots of a streamed structured answer: the object so far, as JSON.
///
/// Iterating starts the request; stopping early cancels it; iterating in a
/// cancelled task throws `CancellationError` (as `ResponseStream` does), so a
/// cut-off object never looks complete.
public struct StructuredResponseStream<Content: Generable>: AsyncSequence, Sendable {
  /// Each element is the object so far.
  public typealias Element = Snapshot

  /// The answer so far.
  public struct Snapshot: Sendable {
    /// The value so far: always valid JSON, growing with every snapshot;
    /// the last one equals the complete answer.
    public let content: JSONValue
    /// The text so far, exactly as the model wrote it (possibly cut mid-token).
    public let jsonText: String
    /// The response so far, from the model that is answering.
    public let rawResponse: GenerateContentResponse
  }

  let base: ResponseStream

  /// Starts the request and returns an iterator over its snapshots.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: base.makeAsyncIterator())
  }

  /// Iterates to the end and returns the answer decoded into `Content`.
  /// - Throws: what the request failed with; `.invalidStructuredOutput` when
  ///   the answer does not decode; `CancellationError` when cancelled.
  public func collect() async throws -> GenerativeModelSession.StructuredResponse<Content> {
    // No snapshot is kept while the next is asked for: one held would share the
    // growing text, and every delta would copy it (a quadratic collect).
    var iterator = makeAsyncIterator()
    while try await iterator.next() != nil {}
    try Task.checkCancellation()
    guard let last = iterator.base.turn?.completed else {
      throw HybridInferenceError.malformedResponse("the stream ended without a response")
    }
    return try GenerativeModelSession.StructuredResponse(decoding: Content.self, from: last.rawResponse)
  }

  /// Yields a snapshot whenever the text so far holds a usable value.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: ResponseStream.AsyncIterator
    /// Reads each snapshot's new text only, so a stream costs its length.
    var reader = JSONSnapshotReader()

    /// The next snapshot, or nil when the answer is complete; throws what the
    /// request failed with (`.invalidStructuredOutput` for text that is not
    /// JSON, or nests deeper than 512 levels), and `CancellationError` when
    /// the iterating task was cancelled.
    public mutating func next() async throws -> Snapshot? {
      while let snapshot = try await base.next() {
        let value: JSONValue?
        do {
          value = try reader.read(snapshot.content)
        } catch {
          throw HybridInferenceError.invalidStructuredOutput("the answer is not JSON: \(error)")
        }
        if let value {
          return Snapshot(content: value, jsonText: snapshot.content, rawResponse: snapshot.rawResponse)
        }
      }
      return nil
    }
  }
}
