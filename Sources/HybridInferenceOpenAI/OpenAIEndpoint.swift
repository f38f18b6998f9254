import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where and how the OpenAI-compatible client sends each call: the URL of
/// a path under the base URL, and the request with its headers and body.
struct OpenAIEndpoint: Sendable {
  /// The API root, version included (`http://127.0.0.1:8080/v1`).
  let baseURL: URL

  /// `{base}/{path}`, the base's trailing slashes dropped; nil when that is
  /// not an http(s) URL with a host. The key is never part of it.
  func url(_ path: String) -> URL? {
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    guard let url = URL(string: "\(base)/\(path)"), url.scheme == "http" || url.scheme == "https",
      Origin(url) != nil, baseURL.query == nil, baseURL.fragment == nil
    else { return nil }
    return url
  }

  /// A request to `path`: POST with `body` as JSON, or GET without one.
  ///
  /// The key goes in `Authorization: Bearer` and nowhere else; with a key,
  /// `.insecureBaseURL` where it would cross the network in the clear (the
  /// Gemini client's rule). Without a key (a fleet on a private network that
  /// asks for none) there is no credential to protect, and plain HTTP to any
  /// host is allowed.
  func request(
    _ path: String, body: (some Encodable)?, apiKey: APIKey?, streaming: Bool, timeout: Duration
  ) throws(HybridInferenceError) -> URLRequest {
    guard let url = url(path) else {
      throw .invalidOptions("cannot form a URL from the base URL \(RemoteURL.display(baseURL))")
    }
    if apiKey != nil { try Origin.requireSecure(url, display: RemoteURL.display(baseURL)) }
    var request = URLRequest(url: url)
    if let body {
      request.httpMethod = "POST"
      request.httpBody = try RequestBodyEncoder.encode(body)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    } else {
      request.httpMethod = "GET"
    }
    request.setValue(streaming ? "text/event-stream" : "application/json", forHTTPHeaderField: "Accept")
    if let apiKey { request.setValue("Bearer \(apiKey.value)", forHTTPHeaderField: "Authorization") }
    request.setValue("hybrid-inference-swift/0.1", forHTTPHeaderField: "User-Agent")
    // URLSession's own (idle) timer is a backstop behind the transport's.
    request.timeoutInterval = max(1, timeout / .seconds(1)) + 60
    return request
  }
}
