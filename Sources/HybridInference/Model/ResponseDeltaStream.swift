/// The deltas of one answer, as a backend streams them: each a
/// `GenerateContentResponse` holding only what is new.
///
/// A thin wrapper over `AsyncThrowingStream` for one reason: Swift's stream
/// ends quietly (`nil`) when the task iterating it is cancelled, so a cut-off
/// answer would look complete. Iterating this one throws `CancellationError`
/// instead, on every backend's stream and on the session's.
public struct ResponseDeltaStream: AsyncSequence, Sendable {
  /// Each element is one delta.
  public typealias Element = GenerateContentResponse
  /// Where a producer puts deltas.
  public typealias Continuation = AsyncThrowingStream<GenerateContentResponse, any Error>.Continuation

  private let base: AsyncThrowingStream<GenerateContentResponse, any Error>

  /// Wraps a stream a backend built itself.
  public init(_ base: AsyncThrowingStream<GenerateContentResponse, any Error>) {
    self.base = base
  }

  /// A stream fed by `produce`, which runs in a task of its own: it finishes
  /// when `produce` returns, throws what `produce` throws, and cancels the task
  /// when the consumer stops listening. Every streaming backend needs exactly
  /// this, so it is written once.
  public static func producing(_ produce: @escaping @Sendable (Continuation) async throws -> Void) -> Self {
    ResponseDeltaStream(
      AsyncThrowingStream { continuation in
        let task = Task {
          do {
            try await produce(continuation)
            continuation.finish()
          } catch {
            continuation.finish(throwing: error)
          }
        }
        continuation.onTermination = { _ in task.cancel() }
      })
  }

  /// A stream that fails at once with `error`.
  public static func failing(_ error: any Error) -> Self {
    ResponseDeltaStream(AsyncThrowingStream { $0.finish(throwing: error) })
  }

  /// Starts iterating.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: base.makeAsyncIterator())
  }

  /// Yields deltas until the answer is complete.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: AsyncThrowingStream<GenerateContentResponse, any Error>.AsyncIterator

    /// The next delta, or nil when the answer is complete; throws what the
    /// backend failed with, and `CancellationError` when the iterating task
    /// was cancelled.
    public mutating func next() async throws -> GenerateContentResponse? {
      try await nextUnlessCancelled(&base)
    }
  }
}

/// The next element of `iterator`, where a quiet end caused by the iterating
/// task's cancellation throws `CancellationError` instead.
func nextUnlessCancelled<Element>(
  _ iterator: inout AsyncThrowingStream<Element, any Error>.AsyncIterator
) async throws -> Element? {
  guard let element = try await iterator.next() else {
    try Task.checkCancellation()
    return nil
  }
  return element
}
