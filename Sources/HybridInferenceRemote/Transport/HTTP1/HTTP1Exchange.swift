import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One request on the HTTP/1.1 client, run start to end on a thread of its
/// own with blocking socket calls, each bounded by `poll` and the deadline;
/// events go straight into the stream's continuation.
///
/// Why a thread per exchange rather than an event loop: the work per byte is
/// a `recv`, the parser and a `yield`, with no hop through a queue, and a
/// thread blocked in `poll` costs nothing while it waits. An idle pooled
/// connection has no thread. Cancelling (`cancel`, or the stream being
/// terminated) shuts the socket down from the cancelling thread, so a
/// blocked read returns at once and the server sees the connection end; the
/// exchange thread then closes the socket, never returning it to the pool.
///
/// `@unchecked Sendable`: the request, deadlines and continuation are
/// immutable (the continuation is itself safe from any thread); what a
/// canceller touches, the cancel flag and the socket it shuts down, is in
/// `state`, a `Locked`; `connectedSent` and `early` are written by
/// `sendEarly` on the caller's thread before the exchange thread starts
/// (`pthread_create` orders the two), and by that thread alone after; when
/// the OS refuses the thread, `abandon` reads them on the caller's thread
/// instead, and no other thread ever does.
final class HTTP1Exchange: @unchecked Sendable {
  typealias Continuation = AsyncThrowingStream<TransportEvent, any Error>.Continuation

  private struct State {
    var cancelled = false
    var finished = false
    /// The socket in use, which `cancel` shuts down; set only while the
    /// exchange thread holds it open.
    var socket: HTTP1Socket?
  }

  private enum Outcome {
    case finished
    case redirect(URLRequest)
  }

  private let client: HTTP1Client
  private let request: URLRequest
  private let connectTimeout: Duration
  private let deadline: ContinuousClock.Instant
  private let continuation: Continuation
  private let state = Locked(State())
  /// Whether `.connected` went out: it is sent once, whatever retries and
  /// redirects follow. Set by `sendEarly` before the exchange thread starts,
  /// by that thread after.
  private var connectedSent = false
  /// The request as `sendEarly` wrote it on an idle connection, for the
  /// exchange thread to go on with (taken by its first `perform`).
  private var early: Early?

  /// A request written from the caller's thread: the connection, the
  /// request's bytes, and how many went out. When the peer was gone that is
  /// 0: the exchange thread's write then fails as on any stale connection,
  /// and the request goes once more on a new one.
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
    state.withLock { state in
      guard !state.finished, !state.cancelled else { return }
      state.cancelled = true
      state.socket?.shutdown()
    }
  }

  private var isCancelled: Bool { state.withLock { $0.cancelled } }

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
  private func detach() -> Bool {
    state.withLock { state in
      state.socket = nil
      return state.cancelled
    }
  }

  /// On the caller's thread, before the exchange thread starts: when the
  /// origin's pool has an idle connection, writes the request on it now,
  /// as far as the socket takes it without waiting.
  ///
  /// Why: the request then reaches the server while the exchange thread is
  /// still being started. On cores that a server's compute keeps busy
  /// (llama-server on the same machine), a new thread can wait a time slice
  /// before it runs, and curl, the yardstick, writes from the thread that
  /// read the previous answer. A fresh connection, or none idle, is left to
  /// the thread: connecting can wait, and this thread is the caller's.
  func sendEarly() {
    guard let url = request.url, let origin = Origin(url), origin.scheme == "http",
      let bytes = try? HTTP1RequestWriter.bytes(of: request),
      case let pool = client.pool(for: origin), let socket = pool.takeIdle()
    else { return }
    attach(socket)
    connectedSent = true
    continuation.yield(.connected)
    early = Early(pool: pool, socket: socket, bytes: bytes, sent: socket.writeAvailable(bytes, from: 0) ?? 0)
  }

  /// Ends the exchange whose thread the OS refused, instead of `run()`:
  /// the idle connection `sendEarly` took is closed and its slot given back
  /// (a request may be on it), and the stream finishes with
  /// `resourceUnavailable`. Called on the caller's thread, which owns
  /// `early` while no exchange thread runs.
  func abandon() {
    if let early {
      self.early = nil
      _ = detach()
      early.socket.close()
      early.pool.release(nil, reusable: false)
    }
    finish(transportError(URLError(.resourceUnavailable), url: request.url))
  }

  /// The exchange thread's body: each redirect followed in turn, then the
  /// stream finished.
  func run() {
    var current = request
    var redirects = 0
    do {
      while true {
        switch try perform(current) {
        case .finished:
          finish(nil)
          return
        case .redirect(let next):
          redirects += 1
          guard redirects <= TaskRouter.maximumRedirects else { throw URLError(.httpTooManyRedirects) }
          current = next
        }
      }
    } catch {
      finish(transportError(error, url: current.url))
    }
  }

  private func finish(_ error: (any Error)?) {
    state.withLock { $0.finished = true }
    if let error { continuation.finish(throwing: error) } else { continuation.finish() }
  }

  /// One request on one origin's pool; a connection that turns out stale
  /// (reused, failed before any response byte) is replaced once.
  private func perform(_ request: URLRequest) throws -> Outcome {
    guard let url = request.url, let origin = Origin(url), origin.scheme == "http" else {
      throw URLError(.unsupportedURL)
    }
    let pool = client.pool(for: origin)
    let early = self.early
    self.early = nil
    let bytes = try early?.bytes ?? HTTP1RequestWriter.bytes(of: request)
    var socket = try early?.socket ?? pool.acquire(until: deadline) { isCancelled }.socket
    var mayRetry = socket != nil
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
          let connectDeadline = min(ContinuousClock.now + connectTimeout, deadline)
          connection = try HTTP1Socket.connect(
            host: origin.host, port: origin.port, deadline: connectDeadline, isCancelled: { isCancelled },
            register: attach)
          socket = connection
        }
        if !connectedSent {
          connectedSent = true
          continuation.yield(.connected)
        }
        var parser = HTTP1ResponseParser(isHeadRequest: request.httpMethod == "HEAD")
        // Counted while this request, on a connection it opened, has no
        // byte of answer (`HTTP1ConnectionPool.release` says why).
        var awaitingAnswer = false
        defer { if awaitingAnswer { pool.answerBegan() } }
        do {
          try connection.write(bytes, from: sent, until: deadline) { isCancelled }
          if opened {
            pool.requestAwaitsFirstAnswer()
            awaitingAnswer = true
          }
          let outcome = try read(connection, &parser, request: request) {
            if awaitingAnswer {
              awaitingAnswer = false
              pool.answerBegan()
            }
          }
          let cancelled = detach()
          if let keepAlive = parser.head?.keepAliveTimeout {
            // A little before the server's own limit, so a request never
            // races the server's close.
            connection.idleTimeout = min(HTTP1Client.defaultIdleTimeout, max(.zero, keepAlive - .seconds(1)))
          }
          let reusable = !cancelled && parser.allowsReuse && connection.idleTimeout > .zero
          pool.release(connection, reusable: reusable)
          return outcome
        } catch  where mayRetry && !parser.receivedAnyByte && !isCancelled && Self.isStale(error) {
          // The server closed the idle connection as the request went out
          // (llama-server does after 5 s): nothing was answered, so the
          // request goes again on a new connection, once.
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

  /// Whether `error` is what a connection the server had closed gives.
  private static func isStale(_ error: any Error) -> Bool {
    if let parse = error as? HTTP1ParseError { return parse == .closedBeforeResponse }
    return (error as? URLError)?.code == .networkConnectionLost
  }

  /// Reads the response, delivering its head and body; returns how it ended.
  /// `answerBegan` is called when the first bytes arrive.
  private func read(
    _ connection: HTTP1Socket, _ parser: inout HTTP1ResponseParser, request: URLRequest,
    answerBegan: () -> Void
  ) throws -> Outcome {
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: HTTP1Client.readBufferBytes)
    defer { buffer.deallocate() }
    while !parser.isComplete {
      let count = try connection.read(into: UnsafeMutableRawBufferPointer(buffer), until: deadline) { isCancelled }
      if count > 0 { answerBegan() }
      let events =
        count == 0 ? try parser.finish() : try parser.feed(UnsafeBufferPointer(rebasing: buffer[0..<count]))
      for event in events {
        switch event {
        case .head(let head):
          if let next = try redirect(head, of: request) {
            // The redirect's body is not read: the connection closes.
            _ = detach()
            connection.shutdown()
            parser = HTTP1ResponseParser()
            return .redirect(next)
          }
          let delivered = ResponseHead(
            statusCode: head.statusCode, contentType: head.value("Content-Type"),
            retryAfter: head.value("Retry-After"))
          guard case .enqueued = continuation.yield(.head(delivered)) else { throw URLError(.cancelled) }
        case .body(let data):
          guard case .enqueued = continuation.yield(.body(data)) else { throw URLError(.cancelled) }
        case .end:
          break
        }
      }
    }
    return .finished
  }

  /// The request a redirect asks for when the policy follows it, nil when
  /// `head` is not a redirect; throws when the policy refuses it (as
  /// `TaskRouter` does for URLSession).
  private func redirect(_ head: HTTP1ResponseHead, of request: URLRequest) throws -> URLRequest? {
    guard [301, 302, 303, 307, 308].contains(head.statusCode), let location = head.value("Location"),
      let from = request.url
    else { return nil }
    guard let to = URL(string: location, relativeTo: from)?.absoluteURL else { throw URLError(.badServerResponse) }
    guard client.redirectPolicy.allows(from: from, to: to) else {
      throw RedirectPolicy.refusal(from: from, to: to)
    }
    return RedirectPolicy.request(following: head.statusCode, from: request, to: to)
  }

  /// The error the stream ends with, in the codes URLSession would use:
  /// the deadline once connected is `TransportFailure.deadlineExceeded`, a
  /// close before any response byte `.badServerResponse`, a truncated
  /// response `.networkConnectionLost`, a malformed one `.badServerResponse`;
  /// failing URLs reduced to their origin.
  private func transportError(_ error: any Error, url: URL?) -> any Error {
    let code: URLError.Code
    switch error {
    case let failure as TransportFailure:
      return failure
    case let parse as HTTP1ParseError:
      code = parse == .truncated ? .networkConnectionLost : .badServerResponse
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
