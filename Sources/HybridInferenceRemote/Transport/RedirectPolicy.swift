import Foundation
import HybridInferenceCore

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

  /// Whether a request to `from` may be replayed to `to`.
  func allows(from: URL?, to: URL?) -> Bool {
    switch self {
    case .never:
      return false
    case .sameOriginOnly:
      guard let from = from.flatMap(Origin.init), let to = to.flatMap(Origin.init) else { return false }
      return from == to
    }
  }
}
