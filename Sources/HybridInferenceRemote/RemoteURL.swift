import Foundation

/// How a remote backend's URL appears in errors, logs and descriptions.
package enum RemoteURL {
  /// `url` without user, password, query or fragment: a proxy URL may carry
  /// credentials of its own, and descriptions must not show them.
  package static func display(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
      return "<unprintable URL>"
    }
    components.user = nil
    components.password = nil
    components.query = nil
    components.fragment = nil
    return components.string ?? "<unprintable URL>"
  }
}
