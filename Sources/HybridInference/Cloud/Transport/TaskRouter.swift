import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLSession delegate of an `HTTPTransport`: routes each task's
/// callbacks to the stream of that task, by task identifier.
///
/// One delegate serves every task of the session, so the routes live behind a
/// lock (`Locked`, which ThreadSanitizer can see); callbacks arrive on
/// URLSession's delegate queue while streams are registered, cancelled and
/// timed out from any thread.
final class TaskRouter: NSObject, URLSessionDataDelegate, Sendable {
  typealias Continuation = AsyncThrowingStream<TransportEvent, any Error>.Continuation

  private struct Route {
    var continuation: Continuation
    /// Set once the request body has started to go out or a response came:
    /// from then on the connect timeout no longer applies.
    var connected = false
    var timers: [Task<Void, Never>] = []
  }

  private let routes = Locked<[Int: Route]>([:])

  func register(_ taskID: Int, continuation: Continuation) {
    routes.withLock { $0[taskID] = Route(continuation: continuation) }
  }

  func attachTimers(_ taskID: Int, _ timers: [Task<Void, Never>]) {
    let attached = routes.withLock { routes -> Bool in
      guard routes[taskID] != nil else { return false }
      routes[taskID]?.timers = timers
      return true
    }
    if !attached { timers.forEach { $0.cancel() } }
  }

  func isConnected(_ taskID: Int) -> Bool {
    routes.withLock { $0[taskID]?.connected ?? true }
  }

  /// Forgets a task whose consumer has gone; its timers stop.
  func remove(_ taskID: Int) {
    let route = routes.withLock { $0.removeValue(forKey: taskID) }
    route?.timers.forEach { $0.cancel() }
  }

  /// Ends a task's stream with `error`, unless it has already ended.
  func fail(_ taskID: Int, with error: any Error) {
    let route = routes.withLock { $0.removeValue(forKey: taskID) }
    route?.timers.forEach { $0.cancel() }
    route?.continuation.finish(throwing: error)
  }

  private func markConnected(_ taskID: Int) -> Continuation? {
    routes.withLock { routes in
      routes[taskID]?.connected = true
      return routes[taskID]?.continuation
    }
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    _ = markConnected(task.taskIdentifier)
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let continuation = markConnected(dataTask.taskIdentifier)
    let http = response as? HTTPURLResponse
    let head = ResponseHead(
      statusCode: http?.statusCode ?? 0,
      contentType: http?.value(forHTTPHeaderField: "Content-Type"))
    continuation?.yield(.head(head))
    completionHandler(continuation == nil ? .cancel : .allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let continuation = routes.withLock { $0[dataTask.taskIdentifier]?.continuation }
    continuation?.yield(.body(data))
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let route = routes.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    guard let route else { return }
    route.timers.forEach { $0.cancel() }
    if let error {
      route.continuation.finish(throwing: Self.urlError(from: error))
    } else {
      route.continuation.finish()
    }
  }

  /// FoundationNetworking reports failures as `URLError` or as an `NSError`
  /// in `NSURLErrorDomain`; both become a `URLError` here.
  static func urlError(from error: any Error) -> any Error {
    if let urlError = error as? URLError { return urlError }
    let nsError = error as NSError
    if nsError.domain == NSURLErrorDomain, let code = URLError.Code(rawValue: nsError.code) {
      return URLError(code)
    }
    return error
  }
}
