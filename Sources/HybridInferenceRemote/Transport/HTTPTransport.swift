import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the transport reports about one HTTP exchange, in order: the head
/// once, then body bytes as they arrive.
package enum TransportEvent: Sendable {
  /// The connection is up and the request has started to go out (sent at
  /// most once, before the head): a failure after it is not being offline.
  case connected
  /// The status line and headers arrived.
  case head(ResponseHead)
  /// The next bytes of the body, delivered the moment the socket yields them.
  case body(Data)
}

/// The parts of an HTTP response head the client reads.
package struct ResponseHead: Sendable, Hashable {
  package var statusCode: Int
  package var contentType: String?
  /// The `Retry-After` header as sent (seconds or an HTTP date); the backend
  /// whose protocol uses it reads it, Gemini's carries `RetryInfo` instead.
  package var retryAfter: String? = nil
  /// Every field, by its name in lowercase (names are case-insensitive); a
  /// repeated field keeps its first value. Downloads read their validators
  /// (`ETag`, `Content-Range`, the hub's `X-Linked-Etag`) and `Location` here.
  package var fields: [String: String] = [:]

  /// The value of the field `name`, whatever its case.
  package func value(_ name: String) -> String? { fields[name.lowercased()] }
}

/// Sends HTTP requests and reports each exchange as an `AsyncThrowingStream`
/// of `TransportEvent`s.
///
/// Which client carries a request is chosen per request: plain `http://`
/// goes through the library's own HTTP/1.1 client (`HTTP1Client`), unless a
/// proxy is configured in the environment for its host or the options ask
/// for `RequestOptions.Transport.urlSession`; `https://` always goes
/// through URLSession. Both report the same events and the same failures.
/// The HTTP/1.1 client waits on its responses with Linux's epoll; on an OS
/// without it (Darwin), every request goes through URLSession.
///
/// Why a delegate and not `URLSession.bytes` or completion handlers:
/// FoundationNetworking on Linux has no `bytes(for:)`, and a completion
/// handler only fires once the body has ended, which would hold every
/// streamed event until the end. A data delegate sees the bytes as libcurl
/// reads them.
///
/// One session serves every request of a model (all its copies share this
/// object): a `TaskRouter` hands each task's callbacks to that task's stream.
/// The session is invalidated when the last copy of the model goes away.
///
/// Timeouts are enforced here rather than by URLSession, whose Linux
/// implementation only has an idle timer: the connect timeout ends a task
/// that has not connected and sent its body in time, with
/// `URLError(.timedOut)` (the server could not be reached); the deadline ends
/// it whatever it is doing, with `TransportFailure.deadlineExceeded` once the
/// request was on its way (the server is reachable but slow) and
/// `URLError(.timedOut)` if it never connected.
///
/// Redirects follow a `RedirectPolicy` (same origin only by default), so
/// no backend's credentials leave the origin they were configured for.
package final class HTTPTransport: Sendable {
  private let session: URLSession
  private let router: TaskRouter
  /// The plain-http client; nil when every request goes through URLSession.
  private let client: HTTP1Client?
  /// The session's connection limit per host, as clamped.
  package let maximumConnectionsPerHost: Int

  /// The most connections per host a transport opens, whatever it is asked:
  /// each is a socket and a libcurl handle.
  package static let connectionLimitRange = 1...1024

  package init(
    maximumConnectionsPerHost: Int = RequestOptions.defaultMaximumConnectionsPerHost,
    redirectPolicy: RedirectPolicy = .sameOriginOnly, transport: RequestOptions.Transport = .automatic
  ) {
    let router = TaskRouter(redirectPolicy: redirectPolicy)
    let configuration = URLSessionConfiguration.ephemeral
    // 0 would be libcurl's "no limit"; the range keeps it a limit.
    let limit = min(
      max(maximumConnectionsPerHost, Self.connectionLimitRange.lowerBound), Self.connectionLimitRange.upperBound)
    self.maximumConnectionsPerHost = limit
    configuration.httpMaximumConnectionsPerHost = limit
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    // The transport's own timers end tasks; URLSession's idle timer is only
    // a backstop, set beyond any deadline a request can have.
    configuration.timeoutIntervalForRequest = 7 * 24 * 3600
    configuration.timeoutIntervalForResource = 7 * 24 * 3600
    self.router = router
    self.client =
      transport == .automatic && EventPoll.isSupported
      ? HTTP1Client(maximumConnectionsPerHost: limit, redirectPolicy: redirectPolicy) : nil
    self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: nil)
  }

  deinit {
    session.finishTasksAndInvalidate()
  }

  /// Starts `request` and reports it as events.
  ///
  /// The exchange stops when its stream is terminated (cancelling the task
  /// that iterates it cancels the URLSession task at once) or when `cancel`
  /// is called, which a consumer that stops early must do.
  /// - Parameters:
  ///   - connectTimeout: How long the connection (and TLS) may take before
  ///     the request body is on its way.
  ///   - deadline: When the whole exchange must be over.
  package func exchange(
    _ request: URLRequest, connectTimeout: Duration, deadline: ContinuousClock.Instant
  ) -> TransportExchange {
    if let client, client.handles(request) {
      return client.exchange(request, connectTimeout: connectTimeout, deadline: deadline)
    }
    let task = session.dataTask(with: request)
    let exchangeID = task.taskIdentifier
    let router = self.router
    let cancel: @Sendable () -> Void = { router.cancel(exchangeID) }
    let events = AsyncThrowingStream<TransportEvent, any Error> { continuation in
      router.register(task, continuation: continuation)
      continuation.onTermination = { _ in cancel() }
      let connectDeadline = min(ContinuousClock.now.advanced(byWait: connectTimeout), deadline)
      let connectTimer = Task {
        try? await Task.sleep(until: connectDeadline)
        guard !Task.isCancelled, !router.isConnected(exchangeID) else { return }
        router.fail(exchangeID, with: URLError(.timedOut))
      }
      let deadlineTimer = Task {
        try? await Task.sleep(until: deadline)
        guard !Task.isCancelled else { return }
        let failure: any Error =
          router.isConnected(exchangeID) ? TransportFailure.deadlineExceeded : URLError(.timedOut)
        router.fail(exchangeID, with: failure)
      }
      router.attachTimers(exchangeID, [connectTimer, deadlineTimer])
      task.resume()
    }
    return TransportExchange(events: TransportEvents(events), cancel: cancel)
  }
}

/// One HTTP exchange in progress.
package struct TransportExchange: Sendable {
  /// `.connected`, the head, then the body as it arrives; throws `URLError` or
  /// `TransportFailure` on failure.
  package let events: TransportEvents
  /// Stops the exchange; harmless once it has ended.
  package let cancel: @Sendable () -> Void
}
