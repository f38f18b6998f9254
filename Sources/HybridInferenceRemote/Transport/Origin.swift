import Foundation
import HybridInferenceCore

/// Where a request goes, as far as trust is concerned: scheme, host and port
/// (RFC 6454). A credential belongs to the origin it was configured for.
///
/// Shared by every HTTP backend: the transport compares origins to refuse
/// cross-origin redirects, backends ask `requireSecure` before attaching a
/// key, and the reachability memory keys its verdicts by origin (the path
/// of a base URL does not change whether its server can be reached).
package struct Origin: Sendable, Hashable, CustomStringConvertible {
  let scheme: String
  let host: String
  let port: Int

  /// The origin of `url`, or nil when it has no scheme or host. The port is
  /// the explicit one or the scheme's default, so `https://h` and
  /// `https://h:443` are the same origin.
  package init?(_ url: URL) {
    guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
      return nil
    }
    let defaultPort: Int
    switch scheme {
    case "https": defaultPort = 443
    case "http": defaultPort = 80
    default: return nil
    }
    self.scheme = scheme
    self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    self.port = url.port ?? defaultPort
  }

  /// `scheme://host:port`: no user, password, path or query, so safe to log.
  package var description: String {
    let shownHost = host.contains(":") ? "[\(host)]" : host
    return "\(scheme)://\(shownHost):\(port)"
  }

  /// Whether the host is this machine: `localhost`, 127.0.0.0/8 or `::1`.
  /// Traffic to it never leaves the machine, so plain HTTP cannot be read
  /// on the way.
  package var isLoopback: Bool {
    if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
    let octets = host.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
  }

  /// Whether a credential may be sent here: over TLS, or over plain HTTP to
  /// this machine (a local test server or proxy). Plain HTTP to any other
  /// host would hand the key to every network hop on the way.
  package var mayCarryCredentials: Bool {
    scheme == "https" || (scheme == "http" && isLoopback)
  }

  /// Throws `.insecureBaseURL` unless a credential may be sent to `url`;
  /// a backend calls it before it attaches its key to a request.
  package static func requireSecure(_ url: URL, display: String) throws(HybridInferenceError) {
    guard let origin = Origin(url), origin.mayCarryCredentials else {
      throw .insecureBaseURL(display)
    }
  }
}
