/// The snapshots of a streamed answer, each holding everything so far.
///
/// Iterating starts the request; stopping early cancels it, and the session
/// takes its next request once the backend has stopped. Snapshots are made
/// as you ask for them, each costing what its delta added: the text is one
/// string that grows in place and each snapshot shares it. Holding on to a
/// snapshot while asking for the next one makes that next delta copy the
/// text (Swift's copy-on-write), so keep what you need from a snapshot
/// rather than the snapshot itself; `collect()` holds none.
public struct ResponseStream: AsyncSequence, Sendable {
  /// Each element is the answer so far.
  public typealias Element = Snapshot

  /// The answer so far.
  public struct Snapshot: Sendable {
    /// The answer text so far; it only ever grows. With tools, every round's
    /// text is part of it, joined by a blank line (see `respond(to:options:)`).
    public let content: String
    /// The response so far of the round that is answering, from the model
    /// that is answering.
    public let rawResponse: GenerateContentResponse
  }

  private let start: @Sendable () throws -> StreamedTurn

  init(start: @escaping @Sendable () throws -> StreamedTurn) {
    self.start = start
  }

  /// Starts the request and returns an iterator over its snapshots.
  public func makeAsyncIterator() -> AsyncIterator {
    do {
      return AsyncIterator(turn: try start(), refusal: nil)
    } catch {
      return AsyncIterator(turn: nil, refusal: error)
    }
  }

  /// Iterates to the end and returns the complete answer.
  public func collect() async throws -> GenerativeModelSession.Response {
    var iterator = makeAsyncIterator()
    // Drops each snapshot before asking for the next, so that the text
    // grows in place (see the type's documentation).
    while try await iterator.next() != nil {}
    try Task.checkCancellation()
    guard let last = iterator.turn?.completed else {
      throw HybridInferenceError.malformedResponse("the stream ended without a response")
    }
    return GenerativeModelSession.Response(content: last.content, rawResponse: last.rawResponse)
  }

  /// Yields snapshots until the answer is complete.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let turn: StreamedTurn?
    /// Why the request could not start (another request in progress, an
    /// invalid option); thrown by the first `next()`.
    private var refusal: (any Error)?

    init(turn: StreamedTurn?, refusal: (any Error)?) {
      self.turn = turn
      self.refusal = refusal
    }

    /// The next snapshot, or nil when the answer is complete; throws what the
    /// request failed with, and `CancellationError` when the iterating task
    /// was cancelled: a cut-off answer never looks like a complete one.
    public mutating func next() async throws -> Snapshot? {
      if let refusal {
        self.refusal = nil
        throw refusal
      }
      return try await turn?.next()
    }
  }
}
