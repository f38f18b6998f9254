import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLSession delegate of an `HTTPTransport`: routes each task's
/// callbacks to the stream of its exchange, and applies the redirect policy.
///
/// An exchange is named by the identifier of its first task; a followed
/// redirect moves it to a new task (FoundationNetworking would replay a
/// redirected POST without its body), so the table also maps each live task
/// to its exchange. One delegate serves every task of the session, so the
/// table lives behind a lock (`Locked`, which ThreadSanitizer can see);
/// callbacks arrive on URLSession's delegate queue while streams are
/// registered, cancelled and timed out from any thread.
final class TaskRouter: NSObject, URLSessionDataDelegate, Sendable {
  typealias Continuation = AsyncThrowingStream<TransportEvent, any Error>.Continuation

  /// How many redirects one exchange follows before it fails.
  static let maximumRedirects = 10

  private struct Route {
    var continuation: Continuation
    /// The task carrying the exchange now.
    var task: URLSessionTask
    /// Set once the request body has started to go out or a response came:
    /// from then on the connect timeout no longer applies.
    var connected = false
    var timers: [Task<Void, Never>] = []
    /// Set when a redirect was refused: the task then completes with the
    /// redirect response, and the stream ends with this failure instead.
    var refusal: (any Error)?
    var redirects = 0
  }

  private struct Table {
    var routes: [Int: Route] = [:]
    /// Each live task's exchange.
    var exchangeOfTask: [Int: Int] = [:]

    mutating func remove(exchange exchangeID: Int) -> Route? {
      guard let route = routes.removeValue(forKey: exchangeID) else { return nil }
      exchangeOfTask[route.task.taskIdentifier] = nil
      return route
    }
  }

  private let table = Locked(Table())
  private let redirectPolicy: RedirectPolicy

  init(redirectPolicy: RedirectPolicy) {
    self.redirectPolicy = redirectPolicy
  }

  /// Starts routing `task`'s callbacks to `continuation`; the exchange is
  /// named by the task's identifier.
  func register(_ task: URLSessionTask, continuation: Continuation) {
    table.withLock { table in
      table.routes[task.taskIdentifier] = Route(continuation: continuation, task: task)
      table.exchangeOfTask[task.taskIdentifier] = task.taskIdentifier
    }
  }

  func attachTimers(_ exchangeID: Int, _ timers: [Task<Void, Never>]) {
    let attached = table.withLock { table -> Bool in
      guard table.routes[exchangeID] != nil else { return false }
      table.routes[exchangeID]?.timers = timers
      return true
    }
    if !attached { timers.forEach { $0.cancel() } }
  }

  func isConnected(_ exchangeID: Int) -> Bool {
    table.withLock { $0.routes[exchangeID]?.connected ?? true }
  }

  /// Forgets an exchange whose consumer has gone: its timers stop and its
  /// current task is cancelled.
  func cancel(_ exchangeID: Int) {
    let route = table.withLock { $0.remove(exchange: exchangeID) }
    route?.timers.forEach { $0.cancel() }
    route?.task.cancel()
  }

  /// Ends an exchange's stream with `error` and cancels its task, unless it
  /// has already ended.
  func fail(_ exchangeID: Int, with error: any Error) {
    let route = table.withLock { $0.remove(exchange: exchangeID) }
    route?.timers.forEach { $0.cancel() }
    route?.continuation.finish(throwing: error)
    route?.task.cancel()
  }

  private func continuation(of taskID: Int) -> Continuation? {
    table.withLock { table in
      table.exchangeOfTask[taskID].flatMap { table.routes[$0] }.flatMap { $0.refusal == nil ? $0.continuation : nil }
    }
  }

  /// Marks the exchange connected and returns its continuation; the first
  /// time, the stream also learns it (`.connected`), which is what tells a
  /// failure before the request went out from one after.
  private func markConnected(_ taskID: Int) -> Continuation? {
    let (continuation, first) = table.withLock { table -> (Continuation?, Bool) in
      guard let exchangeID = table.exchangeOfTask[taskID], let route = table.routes[exchangeID],
        route.refusal == nil
      else { return (nil, false) }
      table.routes[exchangeID]?.connected = true
      return (route.continuation, !route.connected)
    }
    if first { continuation?.yield(.connected) }
    return continuation
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    _ = markConnected(task.taskIdentifier)
  }

  /// Applies the redirect policy. A redirect it allows is followed on a new
  /// task that carries the original method, headers and body (or a GET
  /// without a body for 301, 302 and 303); one it refuses ends the stream
  /// with `TransportFailure.redirectRefused`, and nothing goes to the new place.
  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    // Declining makes the redirect response final: delivered as the answer.
    if redirectPolicy.reportsRedirects { return completionHandler(nil) }
    let from = task.currentRequest?.url ?? task.originalRequest?.url
    var follow: URLSessionTask?
    if redirectPolicy.allows(from: from, to: request.url), let url = request.url {
      let next = RedirectPolicy.request(
        following: response.statusCode, from: task.originalRequest ?? request, to: url)
      follow = session.dataTask(with: next)
    }
    let refusal = RedirectPolicy.refusal(from: from, to: request.url)
    let followed = table.withLock { table -> Bool in
      guard let exchangeID = table.exchangeOfTask[task.taskIdentifier] else { return false }
      guard let follow, let route = table.routes[exchangeID], route.redirects < Self.maximumRedirects else {
        table.routes[exchangeID]?.refusal = follow == nil ? refusal : URLError(.httpTooManyRedirects)
        return false
      }
      table.exchangeOfTask[task.taskIdentifier] = nil
      table.exchangeOfTask[follow.taskIdentifier] = exchangeID
      table.routes[exchangeID]?.task = follow
      table.routes[exchangeID]?.redirects += 1
      return true
    }
    // The task is never cancelled here: FoundationNetworking traps when a
    // task is cancelled while its redirect decision is pending. Declining
    // makes the redirect response final, and the task completes at once.
    completionHandler(nil)
    if followed { follow?.resume() } else { follow?.cancel() }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let continuation = markConnected(dataTask.taskIdentifier)
    let http = response as? HTTPURLResponse
    let head = ResponseHead(
      statusCode: http?.statusCode ?? 0,
      contentType: http?.value(forHTTPHeaderField: "Content-Type"),
      retryAfter: http?.value(forHTTPHeaderField: "Retry-After"),
      fields: Self.fields(of: http))
    continuation?.yield(.head(head))
    // A task nobody listens to any more was cancelled already; `.allow`
    // keeps a declined redirect's response from being cancelled mid-decision.
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    continuation(of: dataTask.taskIdentifier)?.yield(.body(data))
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let route = table.withLock { table -> Route? in
      guard let exchangeID = table.exchangeOfTask[task.taskIdentifier] else { return nil }
      return table.remove(exchange: exchangeID)
    }
    guard let route else { return }
    route.timers.forEach { $0.cancel() }
    if let refusal = route.refusal {
      route.continuation.finish(throwing: refusal)
    } else if let error {
      route.continuation.finish(throwing: Self.urlError(from: error, afterResponse: task.response != nil))
    } else {
      route.continuation.finish()
    }
  }

  /// FoundationNetworking reports failures as `URLError` or as an `NSError`
  /// in `NSURLErrorDomain`; both become a `URLError` here, whose failing URL
  /// keeps only its scheme, host and port: the path can name a Vertex AI
  /// project and the URL a user and password, and an app may print or dump
  /// the error it is handed.
  ///
  /// A body cut short after its head (closed before its last chunk or short
  /// of its `Content-Length`: libcurl's "transfer closed with outstanding
  /// read data remaining") reaches FoundationNetworking with no code of its
  /// own, `.unknown`; such a failure once the response has begun is
  /// `.networkConnectionLost`, as Darwin's URLSession and the HTTP/1.1 client
  /// report a body cut at the transport.
  static func urlError(from error: any Error, afterResponse: Bool = false) -> any Error {
    var code: URLError.Code
    let failingURL: URL?
    if let urlError = error as? URLError {
      (code, failingURL) = (urlError.code, urlError.failingURL)
    } else {
      let nsError = error as NSError
      guard nsError.domain == NSURLErrorDomain, let known = URLError.Code(rawValue: nsError.code) else {
        return error
      }
      (code, failingURL) = (known, nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL)
    }
    if code == .unknown, afterResponse { code = .networkConnectionLost }
    guard let origin = failingURL.flatMap(Self.origin(of:)) else { return URLError(code) }
    return URLError(
      code, userInfo: [NSURLErrorFailingURLErrorKey: origin, Self.failingURLStringKey: origin.absoluteString])
  }

  /// The key `URLError.failureURLString` reads: Foundation's deprecated
  /// `NSURLErrorFailingURLStringErrorKey`, spelled out so that the string
  /// form stays in the error (an app may log it) without the deprecated symbol.
  private static let failingURLStringKey = "NSErrorFailingURLStringKey"

  /// `scheme://host[:port]` of `url`; nil without a scheme or host.
  /// The fields of `response` by lowercased name, as `ResponseHead.fields`.
  private static func fields(of response: HTTPURLResponse?) -> [String: String] {
    var byName: [String: String] = [:]
    for (name, value) in response?.allHeaderFields ?? [:] {
      guard let name = name as? String, let value = value as? String else { continue }
      byName[name.lowercased()] = value
    }
    return byName
  }

  private static func origin(of url: URL) -> URL? {
    guard let scheme = url.scheme, let host = url.host else { return nil }
    var parts = URLComponents()
    parts.scheme = scheme
    parts.host = host
    parts.port = url.port
    return parts.url
  }
}
