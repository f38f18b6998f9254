import Foundation
import HybridInferenceCore

/// A bearer token and, when its issuer said, the moment it stops being good.
package struct BearerToken: Sendable, Hashable {
  /// The token, unprintable like a key.
  package let secret: APIKey
  /// When to ask for a new one (already a margin before the real expiry);
  /// nil when the issuer did not say (then it is kept until a 401).
  package let renewAt: ContinuousClock.Instant?

  /// Whether it may still be sent.
  func isFresh(at now: ContinuousClock.Instant) -> Bool {
    renewAt.map { now < $0 } ?? true
  }

  /// `text` as a token, or the reason it cannot be one.
  ///
  /// RFC 6750's `b64token` characters only: a token goes into a header, and
  /// a provider's line break or space would otherwise let its text add
  /// headers of its own to the request.
  static func checked(_ text: String, renewAt: ContinuousClock.Instant?) throws(HybridInferenceError)
    -> BearerToken
  {
    guard let secret = APIKey(text) else { throw .malformedResponse("the token is empty") }
    let allowed = Set("-._~+/=".utf8)
    guard
      text.utf8.allSatisfy({ byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || allowed.contains(byte)
      })
    else {
      throw .malformedResponse("the token has characters a bearer token cannot have (RFC 6750)")
    }
    return BearerToken(secret: secret, renewAt: renewAt)
  }
}
