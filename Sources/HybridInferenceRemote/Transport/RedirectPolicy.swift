import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Which redirects the transport follows.
///
/// FoundationNetworking replays a redirected request with all of its headers,
/// credentials included, to wherever `Location` points. A backend's key must
/// stay with the origin it was configured for, so the transport decides here,
/// for every backend and whatever header carries the key: a redirect within
/// the origin is followed (the key was meant for that server), one to another
/// origin is refused and nothing is sent there. Refusing rather than following
/// without the key: the request body is the user's prompt, which must not go
/// to a server the app never named either, and a keyless request to an API
/// would only fail there.
package enum RedirectPolicy: Sendable, Hashable {
  /// Follow redirects within the request's origin (scheme, host and port); refuse the rest.
  case sameOriginOnly
  /// Refuse every redirect.
  case never
  /// Follow none: a redirect is the exchange's answer, its head delivered as
  /// any other, for a caller that decides each hop itself (a model download
  /// goes from the hub to a CDN on another origin, its token left behind).
  case reported

  /// Whether the transport delivers a redirect as the answer rather than
  /// following or refusing it.
  var reportsRedirects: Bool { self == .reported }

  /// Whether a request to `from` may be replayed to `to`.
  func allows(from: URL?, to: URL?) -> Bool {
    switch self {
    case .never, .reported:
      return false
    case .sameOriginOnly:
      guard let from = from.flatMap(Origin.init), let to = to.flatMap(Origin.init) else { return false }
      return from == to
    }
  }

  /// What a followed redirect with `status` sends: `original` at `url`, its
  /// method, headers and body kept, except that 301, 302 and 303 turn any
  /// method but GET and HEAD into a GET without a body (as browsers and
  /// libcurl do). Both HTTP clients build the next request here.
  static func request(following status: Int, from original: URLRequest, to url: URL) -> URLRequest {
    var next = original
    next.url = url
    if [301, 302, 303].contains(status), !["GET", "HEAD"].contains(next.httpMethod ?? "GET") {
      next.httpMethod = "GET"
      next.httpBody = nil
    }
    return next
  }

  /// The error a refused redirect from `from` to `to` ends the exchange
  /// with: `TransportFailure.redirectRefused`, or `URLError(.unsupportedURL)`
  /// for a `Location` that is not http(s) at all.
  static func refusal(from: URL?, to: URL?) -> any Error {
    if let fromOrigin = from.flatMap(Origin.init), let toOrigin = to.flatMap(Origin.init) {
      return TransportFailure.redirectRefused(from: fromOrigin, to: toOrigin)
    }
    return URLError(.unsupportedURL)
  }
}
