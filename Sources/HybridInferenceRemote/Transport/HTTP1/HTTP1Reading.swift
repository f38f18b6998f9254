import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The second half of an exchange: its request is on the wire, and the
/// response is read on the client's poller thread (`HTTP1Poller`) as its
/// bytes arrive, each event yielded into the exchange's stream.
///
/// How it ends (`end`, after the poller has let go of the descriptor): a
/// whole response gives its connection back to the pool, reusable when the
/// server allows; a redirect or a stale connection (a reused one closed
/// before any byte of answer, for an idempotent request only) goes on from
/// the exchange's side on a new thread, which connects; anything else
/// closes the connection and ends the stream with the exchange's typed
/// error.
///
/// `@unchecked Sendable`: made on the thread that wrote the request and
/// handed to the poller under its lock; from then on only the poller's
/// thread touches it, or, when the OS refuses that thread, the registering
/// thread, which took it out of the poller's table first.
final class HTTP1Reading: @unchecked Sendable {
  private enum Ending {
    case finished
    case redirect(URLRequest)
    case failed(any Error)
  }

  private let exchange: HTTP1Exchange
  private let attempt: HTTP1Exchange.Attempt
  private let pool: HTTP1ConnectionPool
  private let connection: HTTP1Socket
  /// Whether a stale connection may be replaced: it was reused, and this
  /// request has not been sent again already (and then only an idempotent
  /// one, `HTTP1Exchange.mayResend`).
  private let mayRetry: Bool
  private var parser: HTTP1ResponseParser
  /// Counted in the pool while this request, on a connection it opened,
  /// has no byte of answer (`HTTP1ConnectionPool.release` says why).
  private var awaitingAnswer: Bool
  private var ending: Ending?

  init(
    exchange: HTTP1Exchange, attempt: HTTP1Exchange.Attempt, pool: HTTP1ConnectionPool, connection: HTTP1Socket,
    opened: Bool, mayRetry: Bool
  ) {
    self.exchange = exchange
    self.attempt = attempt
    self.pool = pool
    self.connection = connection
    self.mayRetry = mayRetry
    parser = HTTP1ResponseParser(isHeadRequest: attempt.request.httpMethod == "HEAD")
    awaitingAnswer = opened
    if opened { pool.requestAwaitsFirstAnswer() }
  }

  var descriptor: Int32 { connection.descriptor }
  /// Whether the consumer is too far behind for the socket to be read now.
  var isBehind: Bool { exchange.isBehind }
  var deadline: ContinuousClock.Instant { exchange.deadline }

  /// Reads what has arrived into `buffer` (shared by every reading of the
  /// poller) and delivers it; true once the response has ended, one way
  /// or another.
  func read(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
    do {
      let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
      if count < 0 {
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return false }
        throw exchange.isCancelled ? URLError(.cancelled) : URLError(.networkConnectionLost)
      }
      // A cancelled exchange ends at the end of the stream, and past the
      // read-ahead (a consumer that fell behind, then cancelled: what the
      // kernel still holds is not read into its stream); a reading at pace
      // takes no lock here.
      if count == 0 || exchange.isPastReadAhead, exchange.isCancelled { throw URLError(.cancelled) }
      if count > 0 { answerBegan() }
      let events = count == 0 ? try parser.finish() : try parser.feed(UnsafeBufferPointer(rebasing: buffer[0..<count]))
      for event in events {
        if try deliver(event) { return true }
      }
      if parser.isComplete { ending = .finished }
    } catch {
      ending = .failed(error)
    }
    return ending != nil
  }

  /// Yields one parsed event; true when it ended the response (a redirect
  /// the policy follows).
  private func deliver(_ event: HTTP1ResponseParser.Event) throws -> Bool {
    switch event {
    case .head(let head):
      if let next = try exchange.redirect(head, of: attempt.request) {
        // The redirect's body is not read: the connection closes.
        _ = exchange.detach()
        connection.shutdown()
        parser = HTTP1ResponseParser()
        ending = .redirect(next)
        return true
      }
      let delivered = ResponseHead(
        statusCode: head.statusCode, contentType: head.value("Content-Type"), retryAfter: head.value("Retry-After"),
        fields: head.fieldsByName)
      guard case .enqueued = exchange.continuation.yield(.head(delivered)) else { throw URLError(.cancelled) }
    case .body(let data):
      exchange.yielding(data.count)
      guard case .enqueued = exchange.continuation.yield(.body(data)) else { throw URLError(.cancelled) }
    case .end:
      break
    }
    return false
  }

  /// Ends the reading with `error` (its deadline, or no poller to read it).
  func fail(_ error: any Error) {
    ending = .failed(error)
  }

  private func answerBegan() {
    guard awaitingAnswer else { return }
    awaitingAnswer = false
    pool.answerBegan()
  }

  /// Hands the connection on and ends or continues the exchange; called
  /// once, after the poller let go of the descriptor.
  func end() {
    answerBegan()
    switch ending ?? .failed(URLError(.unknown)) {
    case .finished:
      releaseConnection()
      exchange.finish(nil)
    case .redirect(let next):
      releaseConnection()
      exchange.follow(next, after: attempt)
    case .failed(let error)
    where mayRetry && !parser.receivedAnyByte && !exchange.isCancelled && HTTP1Exchange.isStale(error):
      // The server closed the idle connection without answering after the
      // whole request went out: it may have read and run it, so only an
      // idempotent request goes again on a new connection, once, in the
      // slot it holds; a POST ends with the failure (`mayResend`).
      _ = exchange.detach()
      connection.close()
      exchange.resume(attempt.again())
    case .failed(let error):
      _ = exchange.detach()
      connection.close()
      pool.release(nil, reusable: false)
      exchange.finish(exchange.transportError(error, url: attempt.request.url))
    }
  }

  /// Gives the connection back, for reuse when the response allows it and
  /// the exchange was not cancelled meanwhile.
  private func releaseConnection() {
    let cancelled = exchange.detach()
    if let keepAlive = parser.head?.keepAliveTimeout {
      // A little before the server's own limit, so a request never
      // races the server's close.
      connection.idleTimeout = min(HTTP1Client.defaultIdleTimeout, max(.zero, keepAlive - .seconds(1)))
    }
    let reusable = !cancelled && parser.allowsReuse && connection.idleTimeout > .zero
    pool.release(connection, reusable: reusable)
  }
}
