import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where and how the client sends each call: the URL of a method of one
/// model, and the request with its headers and JSON body.
///
/// The URLs, the producer and the displayed base URL are worked out once,
/// when the endpoint is made (with the model), not per request: percent
/// encoding, URL parsing and redaction give the same answer every time, and
/// at many requests in flight their CPU shows in every request's cost
/// (Benchmarks/RESULTS.md, "Remote clients at scale").
struct GeminiEndpoint: Sendable {
  /// The REST methods the client calls.
  enum Method: String, Sendable, CaseIterable {
    case generateContent
    case streamGenerateContent
    case countTokens
  }

  let baseURL: URL
  let apiVersion: String
  /// The model's resource name: `models/{model}` for the Gemini API,
  /// `projects/{p}/locations/{l}/publishers/google/models/{model}` on Vertex AI.
  let modelPath: String
  /// The Vertex AI project, sent as `x-goog-user-project` with a token
  /// (never logged or shown); nil for the Gemini API.
  let project: String?
  /// Whether this is Vertex AI's form of the API.
  let isVertex: Bool
  /// `RemoteURL.display(baseURL)`: what errors and descriptions show.
  let displayedBaseURL: String
  /// This model behind this server, as `GenerateContentResponse.producer`
  /// names it: `{base}/{version}/{model path}`, without credentials, query
  /// or fragment, and on Vertex AI without the project (a response's
  /// producer is kept in transcripts, which the project stays out of).
  /// Thought signatures are valid only where it is the same.
  private(set) var producer = ""
  /// `url(for:)` of each method, or the error it throws.
  private var urls: [Result<URL, HybridInferenceError>] = []

  init(baseURL: URL, apiVersion: String, modelName: String, backend: ResolvedBackend = .googleAI) {
    self.baseURL = baseURL
    self.apiVersion = apiVersion
    isVertex = backend.isVertex
    switch backend.kind {
    case .googleAI:
      project = nil
      modelPath = modelName.hasPrefix("models/") ? modelName : "models/\(modelName)"
    case .vertexAI(let project, let location):
      self.project = project
      let scope = "projects/\(project ?? "")/locations/\(location)"
      if modelName.hasPrefix("projects/") {
        modelPath = modelName
      } else if modelName.hasPrefix("publishers/") {
        modelPath = "\(scope)/\(modelName)"
      } else {
        let bare = modelName.hasPrefix("models/") ? String(modelName.dropFirst("models/".count)) : modelName
        modelPath = "\(scope)/publishers/google/models/\(bare)"
      }
    }
    var base = RemoteURL.display(baseURL)
    displayedBaseURL = base
    while base.hasSuffix("/") { base.removeLast() }
    producer = "\(base)/\(apiVersion)/\(producerPath)"
    urls = Method.allCases.map { method in Result { () throws(HybridInferenceError) in try makeURL(for: method) } }
  }

  /// `modelPath` without a leading `projects/{p}/` (Vertex AI): what
  /// `producer` names.
  var producerPath: String {
    guard isVertex, modelPath.hasPrefix("projects/") else { return modelPath }
    let rest = modelPath.dropFirst("projects/".count)
    guard let slash = rest.firstIndex(of: "/") else { return modelPath }
    return String(rest[rest.index(after: slash)...])
  }

  /// `{base}/{version}/{modelPath}:{method}`, with `?alt=sse` for streams.
  /// No key is ever part of it. The error names neither the model path nor
  /// the project (a Vertex project id stays out of errors); a project that
  /// is not an id (`ResolvedBackend.isValidProject`) is `invalidOptions`.
  func url(for method: Method) throws(HybridInferenceError) -> URL {
    guard let index = Method.allCases.firstIndex(of: method), urls.indices.contains(index) else {
      return try makeURL(for: method)
    }
    return try urls[index].get()
  }

  private func makeURL(for method: Method) throws(HybridInferenceError) -> URL {
    if let project, !ResolvedBackend.isValidProject(project) {
      throw .invalidOptions(
        "the Vertex AI project is not a project id (ASCII letters, digits, '-', '_', '.', ':', at most 128)")
    }
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#:"))
    let version = apiVersion.addingPercentEncoding(withAllowedCharacters: allowed) ?? apiVersion
    let model = modelPath.addingPercentEncoding(withAllowedCharacters: allowed) ?? modelPath
    let query = method == .streamGenerateContent ? "?alt=sse" : ""
    guard let url = URL(string: "\(base)/\(version)/\(model):\(method.rawValue)\(query)"),
      url.scheme == "http" || url.scheme == "https"
    else {
      throw .invalidOptions("cannot form a URL from the base URL \(displayedBaseURL) and the model name")
    }
    return url
  }

  /// A POST of `body` as JSON to `method`, to be signed by the model's
  /// `RemoteAuthorizer` (the key in `x-goog-api-key`, or a bearer token);
  /// `.insecureBaseURL` where a credential would cross the network in the clear.
  /// - Parameter tokens: Whether the credential is a token: on Vertex AI
  ///   the project then goes in `x-goog-user-project` (billing and quota).
  func request(
    _ method: Method, body: some Encodable, tokens: Bool, timeout: Duration
  ) throws(HybridInferenceError) -> URLRequest {
    let url = try url(for: method)
    try Origin.requireSecure(url, display: displayedBaseURL)
    var request = try RemoteRequest.make(
      url, body: body, streaming: method == .streamGenerateContent, timeout: timeout)
    if tokens, let project { request.setValue(project, forHTTPHeaderField: "x-goog-user-project") }
    request.setValue("hybrid-inference-swift/0.1", forHTTPHeaderField: "x-goog-api-client")
    return request
  }
}
