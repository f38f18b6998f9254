/// The deltas of one answer, as a backend streams them: each a
/// `GenerateContentResponse` holding only what is new.
///
/// A thin wrapper over `AsyncThrowingStream` for two reasons. Swift's stream
/// ends quietly (`nil`) when the task iterating it is cancelled, so a cut-off
/// answer would look complete: iterating this one throws `CancellationError`
/// instead, on every backend's stream and on the session's. And a stream
/// made with `producing(_:)` ends for its consumer only once the backend's
/// work has: when `next()` returns nil or throws, `produce` has returned, so
/// whoever iterated (a hybrid, a session) knows the backend has stopped.
public struct ResponseDeltaStream: AsyncSequence, Sendable {
  /// Each element is one delta.
  public typealias Element = GenerateContentResponse
  /// Where a producer puts deltas.
  public typealias Continuation = AsyncThrowingStream<GenerateContentResponse, any Error>.Continuation

  private let base: AsyncThrowingStream<GenerateContentResponse, any Error>
  /// The backend's work, where the stream knows it (`producing`); nil for a
  /// stream a backend built itself, whose end is all that is known.
  let work: StreamWork?

  /// Wraps a stream a backend built itself.
  public init(_ base: AsyncThrowingStream<GenerateContentResponse, any Error>) {
    self.init(base, work: nil)
  }

  private init(_ base: AsyncThrowingStream<GenerateContentResponse, any Error>, work: StreamWork?) {
    self.base = base
    self.work = work
  }

  /// A stream fed by `produce`, which runs in a task of its own: it finishes
  /// when `produce` returns, throws what `produce` throws, and cancels the task
  /// when the consumer stops listening. Every streaming backend needs exactly
  /// this, so it is written once.
  ///
  /// `produce` returning is what "the backend has stopped" means to the
  /// session (which keeps its slot until then), so it must not return while
  /// work it started for the stream still runs.
  public static func producing(_ produce: @escaping @Sendable (Continuation) async throws -> Void) -> Self {
    let work = StreamWork()
    return ResponseDeltaStream(
      AsyncThrowingStream { continuation in
        let task = Task {
          do {
            try await produce(continuation)
            work.signalEnded()
            continuation.finish()
          } catch {
            work.signalEnded()
            continuation.finish(throwing: error)
          }
        }
        continuation.onTermination = { _ in task.cancel() }
      }, work: work)
  }

  /// A stream that fails at once with `error`.
  public static func failing(_ error: any Error) -> Self {
    ResponseDeltaStream(AsyncThrowingStream { $0.finish(throwing: error) })
  }

  /// Starts iterating.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: base.makeAsyncIterator(), work: work)
  }

  /// Yields deltas until the answer is complete.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: AsyncThrowingStream<GenerateContentResponse, any Error>.AsyncIterator
    let work: StreamWork?

    /// The next delta, or nil when the answer is complete; throws what the
    /// backend failed with, and `CancellationError` when the iterating task
    /// was cancelled. Either end comes once the backend's work has ended.
    public mutating func next() async throws -> GenerateContentResponse? {
      let element: GenerateContentResponse?
      do {
        element = try await base.next()
      } catch {
        await work?.waitUntilEnded()
        throw error
      }
      guard let element else {
        await work?.waitUntilEnded()
        try Task.checkCancellation()
        return nil
      }
      return element
    }
  }
}
