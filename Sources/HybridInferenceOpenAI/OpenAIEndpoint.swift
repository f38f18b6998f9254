import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where and how the OpenAI-compatible client sends each call: the URL of
/// a path under the base URL, and the request with its headers and body.
///
/// The URL of `/chat/completions` is worked out once, when the endpoint is
/// made (with the model): the model's availability asks for it before
/// every request.
struct OpenAIEndpoint: Sendable {
  /// The API root, version included (`http://127.0.0.1:8080/v1`).
  let baseURL: URL
  /// `url("chat/completions")`.
  let chatCompletionsURL: URL?

  init(baseURL: URL) {
    self.baseURL = baseURL
    chatCompletionsURL = Self.url("chat/completions", under: baseURL)
  }

  /// `{base}/{path}`, the base's trailing slashes dropped; nil when that is
  /// not an http(s) URL with a host. The key is never part of it.
  func url(_ path: String) -> URL? {
    path == "chat/completions" ? chatCompletionsURL : Self.url(path, under: baseURL)
  }

  private static func url(_ path: String, under baseURL: URL) -> URL? {
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    guard let url = URL(string: "\(base)/\(path)"), url.scheme == "http" || url.scheme == "https",
      Origin(url) != nil, baseURL.query == nil, baseURL.fragment == nil
    else { return nil }
    return url
  }

  /// A request to `path`: POST with `body` as JSON, or GET without one.
  ///
  /// The key or token goes in `Authorization: Bearer` (put there by the
  /// model's `RemoteAuthorizer`) and nowhere else; with a credential,
  /// `.insecureBaseURL` where it would cross the network in the clear (the
  /// Gemini client's rule). Without one (a fleet on a private network that
  /// asks for none) there is nothing to protect, and plain HTTP to any host
  /// is allowed.
  func request(
    _ path: String, body: (some Encodable)?, credentialed: Bool, streaming: Bool, timeout: Duration
  ) throws(HybridInferenceError) -> URLRequest {
    guard let url = url(path) else {
      throw .invalidOptions("cannot form a URL from the base URL \(RemoteURL.display(baseURL))")
    }
    if credentialed { try Origin.requireSecure(url, display: RemoteURL.display(baseURL)) }
    var request = try RemoteRequest.make(url, body: body, streaming: streaming, timeout: timeout)
    request.setValue("hybrid-inference-swift/0.1", forHTTPHeaderField: "User-Agent")
    return request
  }
}
