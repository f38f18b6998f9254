import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The HTTP side of a download: one request, its redirects decided hop by
/// hop, and the response's head with its body still to read.
///
/// The transport reports redirects (`RedirectPolicy.reported`) and this
/// type decides each: the hub sends a file's bytes to a CDN on another
/// origin, which a download must follow, but its token stays with the hub's
/// origin (`tokenOrigin`) and is never sent anywhere else. Every hop must be
/// https, or plain http to this machine (a test server, a local mirror):
/// plain http elsewhere is refused before anything is sent there.
struct DownloadConnection: Sendable {
  /// How many redirects one request follows: the hub needs two (a renamed
  /// repository, then the CDN).
  static let maximumRedirects = 10
  /// How long connecting may take.
  static let connectTimeout: Duration = .seconds(30)
  /// How long a response may send nothing before the download gives up on
  /// it: a server that stalls without closing would otherwise hold the
  /// download for ever.
  static let stallTimeout: Duration = .seconds(60)

  /// The one transport every download of the process shares: a few
  /// connections per host, redirects reported rather than followed.
  static let sharedTransport = HTTPTransport(maximumConnectionsPerHost: 4, redirectPolicy: .reported)

  let transport: HTTPTransport
  /// The origin `token` belongs to, and the token.
  let tokenOrigin: Origin?
  let token: String?

  /// A response whose head has arrived; its body is read with `nextChunk()`.
  struct Response {
    /// Where the answer came from, after the redirects followed.
    let url: URL
    let head: ResponseHead
    fileprivate var events: TransportEvents.AsyncIterator
    fileprivate let exchange: TransportExchange

    /// The next bytes of the body, nil at its end.
    mutating func nextChunk() async throws -> Data? {
      while let event = try await events.next() {
        if case .body(let data) = event { return data }
      }
      return nil
    }

    /// Stops the exchange (its connection closes): for a body not read to its end.
    func cancel() { exchange.cancel() }

    /// `cancel` as a closure another task may call.
    var stopper: @Sendable () -> Void { exchange.cancel }
  }

  /// Sends `method` to `url` with `headers`, following redirects `follows`
  /// allows (given the hop's origin and the next URL), and returns the
  /// response whose head is not a followed redirect.
  func send(
    _ method: String, to url: URL, headers: [String: String] = [:],
    follows: (_ from: URL, _ to: URL) -> Bool = { _, _ in true }
  ) async throws -> Response {
    var url = url
    for _ in 0...Self.maximumRedirects {
      let response = try await exchange(method, url, headers: headers)
      let status = response.head.statusCode
      guard [301, 302, 303, 307, 308].contains(status), let location = response.head.value("Location") else {
        return response
      }
      guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
        response.cancel()
        throw HybridInferenceError.downloadFailed(
          url: ModelSource.display(url), status: status, reason: "the redirect's Location is not a URL")
      }
      guard follows(url, next) else { return response }
      response.cancel()
      try Self.checkHop(next, from: url)
      url = next
    }
    throw HybridInferenceError.downloadFailed(
      url: ModelSource.display(url), status: nil, reason: "more than \(Self.maximumRedirects) redirects")
  }

  /// Throws unless a request may go to `url`: https, or http to this machine.
  static func checkHop(_ url: URL, from: URL?) throws(HybridInferenceError) {
    guard let origin = Origin(url), origin.mayCarryCredentials else {
      if let from, let fromOrigin = Origin(from) {
        throw .redirectRefused(from: fromOrigin.description, to: Origin(url)?.description ?? ModelSource.display(url))
      }
      throw .invalidModelSource(
        "\(ModelSource.display(url)) is not https (plain http only to this machine)")
    }
  }

  /// One exchange, up to its head.
  private func exchange(
    _ method: String, _ url: URL, headers: [String: String]
  ) async throws -> Response {
    var request = URLRequest(url: url)
    request.httpMethod = method
    // Identity: the bytes on the wire are the file's, so ranges and sizes are the file's.
    request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
    request.setValue("hybrid-inference", forHTTPHeaderField: "User-Agent")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let token, let tokenOrigin, Origin(url) == tokenOrigin {
      request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }
    let exchange = transport.exchange(
      request, connectTimeout: Self.connectTimeout, deadline: .now + .seconds(365 * 24 * 3600))
    var events = exchange.events.makeAsyncIterator()
    do {
      while let event = try await events.next() {
        if case .head(let head) = event {
          return Response(url: url, head: head, events: events, exchange: exchange)
        }
      }
    } catch {
      exchange.cancel()
      try Task.checkCancellation()
      throw Self.failure(error, url: url)
    }
    exchange.cancel()
    try Task.checkCancellation()
    throw HybridInferenceError.downloadFailed(
      url: ModelSource.display(url), status: nil, reason: "the server closed without answering")
  }

  /// A transport failure as the download's error.
  static func failure(_ error: any Error, url: URL) -> HybridInferenceError {
    if let error = error as? HybridInferenceError { return error }
    return .downloadFailed(url: ModelSource.display(url), status: nil, reason: HybridInferenceError.describe(error))
  }
}
