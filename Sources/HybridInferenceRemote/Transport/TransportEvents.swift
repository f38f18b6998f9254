import Foundation

/// One exchange's events as its consumer reads them: the stream the
/// transport fills, telling the transport how many body bytes each read
/// took out of it.
///
/// Why: the HTTP/1.1 client reads a socket as fast as the server sends,
/// into the stream's buffer, whatever the consumer's pace. A server sending
/// faster than the consumer reads (a stalled task, a hostile body) would
/// fill memory. With the count of bytes read, the client stops reading a
/// socket whose consumer is `HTTP1Client.readAheadBytes` behind, and goes
/// on once it has caught up (`HTTP1Exchange.consumed`). URLSession's
/// exchanges pass no counter.
package struct TransportEvents: AsyncSequence, Sendable {
  package typealias Element = TransportEvent

  private let stream: AsyncThrowingStream<TransportEvent, any Error>
  private let consumed: (@Sendable (Int) -> Void)?

  /// - Parameter consumed: Told the size of each body chunk as the
  ///   consumer takes it.
  init(_ stream: AsyncThrowingStream<TransportEvent, any Error>, consumed: (@Sendable (Int) -> Void)? = nil) {
    self.stream = stream
    self.consumed = consumed
  }

  package struct AsyncIterator: AsyncIteratorProtocol {
    fileprivate var base: AsyncThrowingStream<TransportEvent, any Error>.AsyncIterator
    fileprivate let consumed: (@Sendable (Int) -> Void)?

    /// On the caller's executor, as the stream's own iterator: the default
    /// `next(isolation:)` of an iterator with only `next()` would hop off it
    /// for every event, CPU that shows per request at many in flight.
    package mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> TransportEvent? {
      let event = try await base.next(isolation: actor)
      if case .body(let data)? = event { consumed?(data.count) }
      return event
    }

    package mutating func next() async throws -> TransportEvent? {
      try await next(isolation: nil)
    }
  }

  package func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(base: stream.makeAsyncIterator(), consumed: consumed)
  }
}
