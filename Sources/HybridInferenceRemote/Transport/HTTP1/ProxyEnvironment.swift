import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The proxy settings libcurl reads from the environment, as far as the
/// choice of client goes: a plain-http request that libcurl would send
/// through a proxy stays on URLSession, so an app behind a proxy works as it
/// does with URLSession alone.
///
/// Read per request (`getenv`, no copy of the environment): libcurl also
/// reads it for each transfer.
struct ProxyEnvironment {
  /// `http_proxy`, `HTTP_PROXY`, `all_proxy` or `ALL_PROXY`, the first set.
  var proxy: String?
  /// `no_proxy` or `NO_PROXY`.
  var noProxy: String?

  static var current: ProxyEnvironment {
    func variable(_ names: String...) -> String? {
      for name in names {
        if let value = getenv(name), value.pointee != 0 { return String(cString: value) }
      }
      return nil
    }
    return ProxyEnvironment(
      proxy: variable("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"), noProxy: variable("no_proxy", "NO_PROXY"))
  }

  /// Whether a request to `host` would go through a proxy: one is set and
  /// `no_proxy` does not match the host (`*`, the host itself, or a domain
  /// it is in, with or without a leading dot; a `:port` suffix is ignored).
  func proxies(host: String) -> Bool {
    guard proxy != nil else { return false }
    guard let noProxy else { return true }
    let host = host.lowercased()
    for raw in noProxy.split(separator: ",") {
      var entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
      if entry == "*" { return false }
      if entry.hasPrefix("[") {
        entry = String(entry.dropFirst().prefix { $0 != "]" })
      } else if entry.filter({ $0 == ":" }).count == 1 {
        entry = String(entry.prefix { $0 != ":" })
      }
      if entry.hasPrefix(".") { entry.removeFirst() }
      guard !entry.isEmpty else { continue }
      if host == entry || host.hasSuffix("." + entry) { return false }
    }
    return true
  }
}
