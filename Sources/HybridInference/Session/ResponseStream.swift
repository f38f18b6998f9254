/// The snapshots of a streamed answer, each holding everything so far.
///
/// Iterating starts the request; stopping early cancels it.
public struct ResponseStream: AsyncSequence, Sendable {
  /// Each element is the answer so far.
  public typealias Element = Snapshot

  /// The answer so far.
  public struct Snapshot: Sendable {
    /// The answer text so far.
    public let content: String
    /// The response so far, from the model that is answering.
    public let rawResponse: GenerateContentResponse
  }

  private let start: @Sendable () -> AsyncThrowingStream<Snapshot, any Error>

  init(start: @escaping @Sendable () -> AsyncThrowingStream<Snapshot, any Error>) {
    self.start = start
  }

  /// Starts the request and returns an iterator over its snapshots.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: start().makeAsyncIterator())
  }

  /// Iterates to the end and returns the complete answer.
  public func collect() async throws -> GenerativeModelSession.Response {
    var last: Snapshot?
    for try await snapshot in self { last = snapshot }
    try Task.checkCancellation()
    guard let last else {
      throw HybridInferenceError.malformedResponse("the stream ended without a response")
    }
    return GenerativeModelSession.Response(content: last.content, rawResponse: last.rawResponse)
  }

  /// Yields snapshots until the answer is complete.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: AsyncThrowingStream<Snapshot, any Error>.AsyncIterator

    /// The next snapshot, or nil when the answer is complete; throws what the
    /// request failed with, and `CancellationError` when the iterating task
    /// was cancelled: a cut-off answer never looks like a complete one.
    public mutating func next() async throws -> Snapshot? {
      try await nextUnlessCancelled(&base)
    }
  }
}
