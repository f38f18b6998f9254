import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The library's own HTTP/1.1 client for plain `http://` origins
/// (llama-server, vLLM, in-cluster gateways, loopback servers).
///
/// Why not URLSession there: on Linux, FoundationNetworking runs every
/// request through libcurl's multi handle, a Dispatch source per socket and
/// the delegate queue, which at 32 and more requests in flight leaves it far
/// behind curl, cold and warm (Benchmarks/RESULTS.md, "Remote clients at
/// scale"). This client writes the request (from
/// the caller's thread on an idle connection, else on a thread of the
/// exchange's own), reads every response on one poller thread
/// (`HTTP1Poller`) and yields each chunk into the stream: no hop in
/// between. `https://` stays on URLSession: TLS is not this library's to
/// write.
///
/// Connections are pooled per origin (`HTTP1ConnectionPool`), at most
/// `maximumConnectionsPerHost` open, idle ones reused.
package final class HTTP1Client: Sendable {
  /// How long an idle connection stays open when the server did not say
  /// (`Keep-Alive: timeout=`): servers close theirs after 5 s (llama-server)
  /// to a few minutes. A stale one whose close is seen before the write
  /// costs a new connection; one the server closes as a POST goes out costs
  /// that request an error (`HTTP1Exchange.mayResend`).
  static let defaultIdleTimeout: Duration = .seconds(30)
  /// The bytes one `recv` may take; a streamed event is far smaller, a
  /// unary body arrives in a few reads.
  static let readBufferBytes = 64 << 10
  /// The stack of an exchange thread and of the poller's: the parser and
  /// the socket calls need little.
  static let threadStackBytes = 512 << 10

  let redirectPolicy: RedirectPolicy
  private let maximumConnectionsPerHost: Int
  private let pools = Locked([String: HTTP1ConnectionPool]())
  /// How long the poller's thread stays with no response to wait for
  /// before it ends (a client in steady use keeps it; an idle one holds none).
  static let pollerLinger: Duration = .seconds(2)

  /// How many body bytes of one response may wait in its stream, read but
  /// not yet taken by its consumer, before the poller stops reading that
  /// socket (`TransportEvents`): the most a response holds in memory
  /// besides the sockets' own buffers, whatever the server sends. A
  /// consumer at pace never waits on it: a chunk is at most
  /// `readBufferBytes`, taken long before sixteen more arrive.
  static let readAheadBytes = 1 << 20

  /// The stack of the next threads (exchanges', the poller's when it
  /// starts): `threadStackBytes`; tests ask for one the OS cannot map (at
  /// `init`, or between two requests) to see an exchange whose thread is
  /// refused end. Behind a lock because the client is shared by every task
  /// of its model.
  let stackBytes: Locked<Int>
  /// The thread every response is read on.
  let poller: HTTP1Poller

  /// `pollerLinger`, `wakePipe` and `onPollerNudge` are the poller's
  /// (`HTTP1Poller`): tests shorten the first, refuse the second and count
  /// the wakes with the third.
  init(
    maximumConnectionsPerHost: Int, redirectPolicy: RedirectPolicy, stackBytes: Int = threadStackBytes,
    pollerLinger: Duration = pollerLinger,
    wakePipe: @escaping @Sendable () -> (read: Int32, write: Int32)? = HTTP1Poller.systemPipe,
    onPollerNudge: @escaping @Sendable () -> Void = {}
  ) {
    self.maximumConnectionsPerHost = maximumConnectionsPerHost
    self.redirectPolicy = redirectPolicy
    let stackBytes = Locked(stackBytes)
    self.stackBytes = stackBytes
    poller = HTTP1Poller(
      stackBytes: { stackBytes.withLock { $0 } }, linger: pollerLinger, makePipe: wakePipe, onNudge: onPollerNudge)
  }

  deinit {
    pools.withLock { $0.values.forEach { $0.close() } }
  }

  /// Whether this client carries `request`: plain `http`, with no proxy
  /// configured for its host (libcurl honours `http_proxy` and friends,
  /// so such a request stays on URLSession).
  func handles(_ request: URLRequest) -> Bool {
    guard let url = request.url, let origin = Origin(url), origin.scheme == "http" else { return false }
    return !ProxyEnvironment.current.proxies(host: origin.host)
  }

  /// The pool of `origin`, made on first use.
  func pool(for origin: Origin) -> HTTP1ConnectionPool {
    let key = "\(origin.host)|\(origin.port)"
    return pools.withLock { pools in
      if let pool = pools[key] { return pool }
      let pool = HTTP1ConnectionPool(limit: maximumConnectionsPerHost)
      pools[key] = pool
      return pool
    }
  }

  /// Starts `request` (`HTTP1Exchange.start`: written from this thread when
  /// an idle connection can take it, else on a thread of its own); see
  /// `HTTPTransport.exchange`. When the OS refuses a thread, the stream
  /// ends at once with `resourceUnavailable`.
  func exchange(
    _ request: URLRequest, connectTimeout: Duration, deadline: ContinuousClock.Instant
  ) -> TransportExchange {
    let (events, continuation) = AsyncThrowingStream.makeStream(of: TransportEvent.self)
    let exchange = HTTP1Exchange(
      client: self, request: request, connectTimeout: connectTimeout, deadline: deadline,
      continuation: continuation)
    continuation.onTermination = { _ in exchange.cancel() }
    exchange.start()
    return TransportExchange(
      events: TransportEvents(events, consumed: { exchange.consumed($0) }), cancel: { exchange.cancel() })
  }
}
