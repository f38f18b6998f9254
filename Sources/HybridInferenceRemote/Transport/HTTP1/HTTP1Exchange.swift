import Foundation
import HybridInferenceCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One request on the HTTP/1.1 client: connected and written on a thread
/// of its own with blocking socket calls, each bounded by `poll` and the
/// deadline, then read on the client's poller thread (`HTTP1Reading`),
/// events going straight into the stream's continuation.
///
/// Why a thread for the first half: connecting, waiting for a pool slot
/// and writing a large body block, and a thread blocked in `poll` costs
/// nothing while it waits. A request on an idle connection whose bytes the
/// socket takes at once (`start`) needs none: it is written from the
/// caller's thread and goes straight to the poller. An idle pooled
/// connection has no thread. Cancelling (`cancel`, or the stream being
/// terminated) shuts the socket down from the cancelling thread, so a
/// blocked write or a waiting read returns at once and the server sees the
/// connection end; the socket's holder then closes it, never returning it
/// to the pool.
///
/// `@unchecked Sendable`: the request, deadlines and continuation are
/// immutable (the continuation is itself safe from any thread); what a
/// canceller touches, the cancel flag and the socket it shuts down, is in
/// `state`, a `Locked`; `connectedSent` and `early` belong to one thread at
/// a time: the caller's in `start`, then the exchange thread it starts
/// (`pthread_create` orders the two) or the poller's (handed over under its
/// lock), which hand on in turn the same ways.
final class HTTP1Exchange: @unchecked Sendable {
  typealias Continuation = AsyncThrowingStream<TransportEvent, any Error>.Continuation

  private struct State {
    var cancelled = false
    var finished = false
    /// The socket in use, which `cancel` shuts down; set only while the
    /// exchange holds it open.
    var socket: HTTP1Socket?
  }

  /// One try at the request: the first, a redirect's, or the same request
  /// again on a new connection after a stale one (`mayResend` says when).
  struct Attempt {
    let request: URLRequest
    let redirects: Int
    /// Whether the exchange holds a pool slot with no connection in it (a
    /// stale one was closed), in which this try connects.
    let holdsSlot: Bool
    /// Whether a reused connection found stale may still be replaced.
    let mayRetry: Bool

    /// A request's first try.
    static func first(_ request: URLRequest) -> Attempt {
      Attempt(request: request, redirects: 0, holdsSlot: false, mayRetry: true)
    }

    /// The same request, once more on a new connection in the slot held.
    func again() -> Attempt {
      Attempt(request: request, redirects: redirects, holdsSlot: true, mayRetry: false)
    }
  }

  private let client: HTTP1Client
  private let request: URLRequest
  private let connectTimeout: Duration
  let deadline: ContinuousClock.Instant
  let continuation: Continuation
  private let state = Locked(State())
  /// Body bytes yielded into the stream and not yet taken by the consumer
  /// (`TransportEvents`); an atomic, since the poller adds and the consumer
  /// subtracts, each on its own thread, once per chunk.
  private let unread = Atomic<Int>(0)
  /// Whether `.connected` went out: it is sent once, whatever retries and
  /// redirects follow.
  private var connectedSent = false
  /// The request as `sendEarly` wrote it on an idle connection, for the
  /// exchange thread to go on with (taken by its first `send`).
  private var early: Early?

  /// A request written from the caller's thread: the connection, the
  /// request's bytes, and how many went out. When the peer was gone before
  /// the first byte that is 0: the exchange thread's write then fails as on
  /// any stale connection, and the request goes once more on a new one.
  private struct Early {
    let pool: HTTP1ConnectionPool
    let socket: HTTP1Socket
    let bytes: [UInt8]
    let sent: Int
  }

  init(
    client: HTTP1Client, request: URLRequest, connectTimeout: Duration, deadline: ContinuousClock.Instant,
    continuation: Continuation
  ) {
    self.client = client
    self.request = request
    self.connectTimeout = connectTimeout
    self.deadline = deadline
    self.continuation = continuation
  }

  /// Stops the exchange from any thread without waiting for it; harmless
  /// once it has ended.
  func cancel() {
    let cancelled = state.withLock { state in
      guard !state.finished, !state.cancelled else { return false }
      state.cancelled = true
      state.socket?.shutdown()
      return true
    }
    // A reading the poller may have stopped (`isBehind`; once stopped, it is
    // woken only under half the read-ahead) is read again, and ends.
    if cancelled, unread.load(ordering: .relaxed) >= HTTP1Client.readAheadBytes / 2 { client.poller.wake() }
  }

  var isCancelled: Bool { state.withLock { $0.cancelled } }

  /// Counts `bytes` of body into the stream, before they are yielded.
  func yielding(_ bytes: Int) {
    unread.add(bytes, ordering: .relaxed)
  }

  /// The consumer took `bytes` of body. The poller stops reading this
  /// socket at `readAheadBytes` unread and is woken when the consumer is
  /// back under half of it, so a consumer slower than the server costs a
  /// wake-up per half of the read-ahead, not per chunk. (Counted before the
  /// poller's lock is taken: the poller reads the count under it, so it
  /// either sees the new count or is woken.)
  func consumed(_ bytes: Int) {
    let resume = HTTP1Client.readAheadBytes / 2
    let (before, after) = unread.subtract(bytes, ordering: .relaxed)
    if before >= resume, after < resume { client.poller.wake() }
  }

  /// Whether `HTTP1Client.readAheadBytes` of body wait for the consumer.
  var isPastReadAhead: Bool { unread.load(ordering: .relaxed) >= HTTP1Client.readAheadBytes }

  /// Whether the consumer is so far behind that the socket is not read.
  /// Never once cancelled: the poller must then see the socket shut down,
  /// and give its slot back.
  var isBehind: Bool { isPastReadAhead && !isCancelled }

  /// Makes `socket` the one `cancel` shuts down (nil: none); a socket
  /// attached after a cancellation is shut down at once.
  private func attach(_ socket: HTTP1Socket?) {
    state.withLock { state in
      state.socket = socket
      if state.cancelled { socket?.shutdown() }
    }
  }

  /// Detaches the socket; true when the exchange was cancelled meanwhile
  /// (the socket may have been shut down, so it must not be reused).
  func detach() -> Bool {
    state.withLock { state in
      state.socket = nil
      return state.cancelled
    }
  }

  /// Starts the exchange from the caller's thread: the request written on
  /// an idle connection (`sendEarly`) and, when all of it went out, its
  /// response awaited on the poller; else a thread of its own connects or
  /// writes the rest. When the OS refuses the thread, the stream ends at
  /// once with `resourceUnavailable` (`abandon`).
  func start() {
    sendEarly()
    if let early, early.sent == early.bytes.count {
      self.early = nil
      client.poller.register(
        HTTP1Reading(
          exchange: self, attempt: .first(request), pool: early.pool, connection: early.socket, opened: false,
          mayRetry: Self.mayResend(request, afterWriting: true)))
    } else if !startThread({ self.drive(.first(self.request)) }) {
      abandon()
    }
  }

  /// Runs `body` on a new exchange thread; false when the OS refuses one.
  private func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    OSThread.start(stackSize: client.stackBytes.withLock { $0 }, body)
  }

  /// When the origin's pool has an idle connection, writes the request on
  /// it now, as far as the socket takes it without waiting.
  ///
  /// Why: the request then reaches the server while the exchange thread is
  /// still being started. On cores that a server's compute keeps busy
  /// (llama-server on the same machine), a new thread can wait a time slice
  /// before it runs, and curl, the yardstick, writes from the thread that
  /// read the previous answer. A fresh connection, or none idle, is left to
  /// the thread: connecting can wait, and this thread is the caller's.
  private func sendEarly() {
    guard let url = request.url, let origin = Origin(url), origin.scheme == "http",
      let bytes = try? HTTP1RequestWriter.bytes(of: request),
      case let pool = client.pool(for: origin), let socket = pool.takeIdle()
    else { return }
    attach(socket)
    connectedSent = true
    continuation.yield(.connected)
    var sent = 0
    _ = socket.writeAvailable(bytes, from: &sent)
    early = Early(pool: pool, socket: socket, bytes: bytes, sent: sent)
  }

  /// Ends the exchange whose thread the OS refused, instead of `run()`:
  /// the idle connection `sendEarly` took is closed and its slot given back
  /// (a request may be on it), and the stream finishes with
  /// `resourceUnavailable`. Called on the caller's thread, which owns
  /// `early` while no exchange thread runs.
  private func abandon() {
    if let early {
      self.early = nil
      _ = detach()
      early.socket.close()
      early.pool.release(nil, reusable: false)
    }
    finish(transportError(URLError(.resourceUnavailable), url: request.url))
  }

  /// Sends `attempt` and hands its response to the poller, or ends the
  /// stream with what stopped it.
  private func drive(_ attempt: Attempt) {
    do {
      client.poller.register(try send(attempt))
    } catch {
      finish(transportError(error, url: attempt.request.url))
    }
  }

  /// Goes on with `attempt` on a new exchange thread (from the poller, which
  /// must not block on a connect); a refused thread ends the stream with
  /// `resourceUnavailable`, giving back the slot the attempt holds.
  func resume(_ attempt: Attempt) {
    guard !startThread({ self.drive(attempt) }) else { return }
    if attempt.holdsSlot, let url = attempt.request.url, let origin = Origin(url) {
      client.pool(for: origin).release(nil, reusable: false)
    }
    finish(transportError(URLError(.resourceUnavailable), url: attempt.request.url))
  }

  /// Follows a redirect the policy allowed, within the limit.
  func follow(_ next: URLRequest, after attempt: Attempt) {
    guard attempt.redirects < TaskRouter.maximumRedirects else {
      finish(transportError(URLError(.httpTooManyRedirects), url: attempt.request.url))
      return
    }
    resume(Attempt(request: next, redirects: attempt.redirects + 1, holdsSlot: false, mayRetry: true))
  }

  func finish(_ error: (any Error)?) {
    state.withLock { $0.finished = true }
    if let error { continuation.finish(throwing: error) } else { continuation.finish() }
  }

  /// Writes `attempt`'s request on a connection of its origin's pool and
  /// returns the reading of its response; a reused connection that turns
  /// out stale (the write fails) is replaced once, when `mayResend` allows.
  private func send(_ attempt: Attempt) throws -> HTTP1Reading {
    let request = attempt.request
    guard let url = request.url, let origin = Origin(url), origin.scheme == "http" else {
      throw URLError(.unsupportedURL)
    }
    let pool = client.pool(for: origin)
    let early = self.early
    self.early = nil
    let bytes = try early?.bytes ?? HTTP1RequestWriter.bytes(of: request)
    var socket: HTTP1Socket?
    if let early {
      socket = early.socket
    } else if !attempt.holdsSlot {
      socket = try pool.acquire(until: deadline) { isCancelled }.socket
    }
    var mayRetry = attempt.mayRetry && socket != nil
    // What already went out on `socket` (sendEarly's part).
    var sent = early?.sent ?? 0
    // The slot is this exchange's from here: every path hands it back.
    do {
      while true {
        let connection: HTTP1Socket
        let opened = socket == nil
        if let socket {
          connection = socket
          attach(connection)
        } else {
          // The connect timeout starts once the pool gave a slot (waiting
          // for one is bounded by the deadline only), and bounds every
          // connect, a retry's or a redirect's too.
          let connectDeadline = min(ContinuousClock.now.advanced(byWait: connectTimeout), deadline)
          connection = try HTTP1Socket.connect(
            host: origin.host, port: origin.port, deadline: connectDeadline, isCancelled: { isCancelled },
            register: attach)
          socket = connection
        }
        if !connectedSent {
          connectedSent = true
          continuation.yield(.connected)
        }
        do {
          try connection.write(bytes, from: &sent, until: deadline) { isCancelled }
          return HTTP1Reading(
            exchange: self, attempt: attempt, pool: pool, connection: connection, opened: opened,
            mayRetry: mayRetry && Self.mayResend(request, afterWriting: true))
        } catch
          where mayRetry && !isCancelled && Self.isStale(error)
          && Self.mayResend(request, afterWriting: sent > 0)
        {
          // The server closed the idle connection as the request went out
          // (llama-server does after 5 s), before any byte of it (or the
          // request is idempotent): the request goes again on a new
          // connection, once.
          _ = detach()
          connection.close()
          (socket, mayRetry, sent) = (nil, false, 0)
        }
      }
    } catch {
      _ = detach()
      socket?.close()
      pool.release(nil, reusable: false)
      throw error
    }
  }

  /// Whether a request whose reused connection failed before any byte of
  /// answer may go again on a new one.
  ///
  /// Only what provably never reached the server may, whatever its method:
  /// no byte of it went out (the write failed at once, the peer's close
  /// already there; a close seen before the write never gets this far,
  /// `HTTP1Socket.isUsableWhenIdle`). Once a byte went out, the server may
  /// have read the whole request and run it before closing, so only an
  /// idempotent method (RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE, PUT,
  /// DELETE) goes again (RFC 9112 §9.3.1). A POST, every generation, ends
  /// with the connection's failure instead: the retry loop then knows the
  /// request may have reached the server (`connectionLost`) and never sends
  /// a generation twice.
  static func mayResend(_ request: URLRequest, afterWriting wroteAny: Bool) -> Bool {
    guard wroteAny else { return true }
    return ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(request.httpMethod ?? "GET")
  }

  /// Whether `error` is what a connection the server had closed gives.
  static func isStale(_ error: any Error) -> Bool {
    if let parse = error as? HTTP1ParseError { return parse == .closedBeforeResponse }
    return (error as? URLError)?.code == .networkConnectionLost
  }

  /// The request a redirect asks for when the policy follows it, nil when
  /// `head` is not a redirect; throws when the policy refuses it (as
  /// `TaskRouter` does for URLSession).
  func redirect(_ head: HTTP1ResponseHead, of request: URLRequest) throws -> URLRequest? {
    guard !client.redirectPolicy.reportsRedirects, [301, 302, 303, 307, 308].contains(head.statusCode),
      let location = head.value("Location"), let from = request.url
    else { return nil }
    guard let to = URL(string: location, relativeTo: from)?.absoluteURL else {
      throw TransportFailure.malformedResponse(reason: "a redirect's Location is not a URL")
    }
    guard client.redirectPolicy.allows(from: from, to: to) else {
      throw RedirectPolicy.refusal(from: from, to: to)
    }
    return RedirectPolicy.request(following: head.statusCode, from: request, to: to)
  }

  /// The error the stream ends with, in the codes URLSession would use:
  /// the deadline once connected is `TransportFailure.deadlineExceeded`, a
  /// close before any response byte `.badServerResponse`, a truncated
  /// response `.networkConnectionLost`; failing URLs reduced to their
  /// origin. A malformed response is `TransportFailure.malformedResponse`,
  /// not a `URLError`: the server answered, and only a failure of the
  /// connection itself may read as a lost connection or as offline.
  func transportError(_ error: any Error, url: URL?) -> any Error {
    let code: URLError.Code
    switch error {
    case let failure as TransportFailure:
      return failure
    case HTTP1ParseError.truncated:
      code = .networkConnectionLost
    case HTTP1ParseError.closedBeforeResponse:
      code = .badServerResponse
    case let parse as HTTP1ParseError:
      return TransportFailure.malformedResponse(reason: parse.reason)
    case let urlError as URLError:
      if urlError.code == .timedOut, connectedSent { return TransportFailure.deadlineExceeded }
      code = isCancelled ? .cancelled : urlError.code
    default:
      return error
    }
    guard let url else { return URLError(code) }
    return TaskRouter.urlError(from: URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url]))
  }
}
