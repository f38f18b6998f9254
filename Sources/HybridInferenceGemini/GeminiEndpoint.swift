import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where and how the client sends each call: the URL of a method of one
/// model, and the request with its headers and JSON body.
struct GeminiEndpoint: Sendable {
  /// The REST methods the client calls.
  enum Method: String, Sendable {
    case generateContent
    case streamGenerateContent
    case countTokens
  }

  let baseURL: URL
  let apiVersion: String
  /// The model's resource name, `models/{model}`.
  let modelPath: String

  init(baseURL: URL, apiVersion: String, modelName: String) {
    self.baseURL = baseURL
    self.apiVersion = apiVersion
    self.modelPath = modelName.hasPrefix("models/") ? modelName : "models/\(modelName)"
  }

  /// `{base}/{version}/models/{model}:{method}`, with `?alt=sse` for streams.
  /// The key is never part of it.
  func url(for method: Method) throws(HybridInferenceError) -> URL {
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#:"))
    let version = apiVersion.addingPercentEncoding(withAllowedCharacters: allowed) ?? apiVersion
    let model = modelPath.addingPercentEncoding(withAllowedCharacters: allowed) ?? modelPath
    let query = method == .streamGenerateContent ? "?alt=sse" : ""
    guard let url = URL(string: "\(base)/\(version)/\(model):\(method.rawValue)\(query)"),
      url.scheme == "http" || url.scheme == "https"
    else {
      throw .invalidOptions(
        "cannot form a URL from the base URL \(RemoteURL.display(baseURL)) and model \(modelPath)")
    }
    return url
  }

  /// A POST of `body` as JSON to `method`, authenticated by the
  /// `x-goog-api-key` header; `.insecureBaseURL` where the key would cross
  /// the network in the clear.
  func request(
    _ method: Method, body: some Encodable, apiKey: APIKey, timeout: Duration
  ) throws(HybridInferenceError) -> URLRequest {
    let url = try url(for: method)
    try Origin.requireSecure(url, display: RemoteURL.display(baseURL))
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.httpBody = try RequestBodyEncoder.encode(body)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue(
      method == .streamGenerateContent ? "text/event-stream" : "application/json",
      forHTTPHeaderField: "Accept")
    request.setValue(apiKey.value, forHTTPHeaderField: "x-goog-api-key")
    request.setValue("hybrid-inference-swift/0.1", forHTTPHeaderField: "x-goog-api-client")
    // URLSession's own (idle) timer is a backstop behind the transport's.
    request.timeoutInterval = max(1, timeout / .seconds(1)) + 60
    return request
  }
}
