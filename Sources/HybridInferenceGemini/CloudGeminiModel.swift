import Foundation
import HybridInferenceCore
import HybridInferenceRemote

/// A Gemini model behind the Gemini Developer API's REST interface, or
/// Vertex AI's (`backend: .vertexAI(project:location:)`).
///
/// ```swift
/// let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite")  // key from the environment
/// let session = GenerativeModelSession(model: cloud)
/// ```
///
/// It speaks the public REST protocol byte for byte (`:generateContent`,
/// `:streamGenerateContent?alt=sse`, `:countTokens`, the `x-goog-api-key`
/// header), so the same client talks to Google and to any server or proxy
/// that speaks it; `baseURL` and `apiVersion` choose which.
///
/// Streams arrive event by event as the server sends them. Failures are
/// typed (`HybridInferenceError`): an unreachable cloud is `.offline`, which
/// is what lets a prefer-cloud hybrid answer on device; an HTTP error status
/// is `.cloudAPI` and never `.offline`. Transient statuses are retried under
/// `RequestOptions.retryPolicy`. The API key never appears in a URL, a log
/// line, an error or any description of the model.
///
/// Offline means the request never reached the server: no route, DNS, a
/// refused connection, a reset before the request went out, the connect
/// timeout, or a failed TLS handshake (a bad or untrusted certificate
/// included: the handshake precedes the request, so nothing was sent, and a
/// captive portal fails exactly there). A server that completes the
/// handshake and then stalls is `.timedOut`, one that drops the connection
/// after the request, or cuts a body short of its end, `.connectionLost`
/// (never retried for a generation, which the server may have run): reached,
/// so never offline. An
/// offline verdict is remembered per origin (`RequestOptions.remembersOffline`,
/// `rememberedFailure`) until a background TCP probe or a request gets through.
///
/// The key stays with its origin: a redirect to another scheme, host or port
/// is refused (`.redirectRefused`), and a plain `http://` base URL is refused
/// (`.insecureBaseURL`) unless it is this machine. The same holds for a
/// bearer token (`authorization: .bearerToken { ... }` or `.metadataServer`).
///
/// Google's server-side tools (`serverTools: [.googleSearch()]`) run in the
/// cloud only: the on-device model has none, so a hybrid whose answers must
/// be grounded should use this model alone.
///
/// A value: copies share one URL session, released with the last copy.
public struct CloudGeminiModel: LanguageModel {
  /// The model name as given (`"gemini-3.1-flash-lite"`); also `modelVersion`.
  public let name: String
  /// The server, without the API version (`https://generativelanguage.googleapis.com`).
  public let baseURL: URL
  /// Which service: the Gemini Developer API or Vertex AI.
  public let backend: GeminiBackend
  /// The API version path segment (`"v1beta"`, `"v1"` on Vertex AI).
  public let apiVersion: String
  /// Timeouts and retries.
  public let requestOptions: RequestOptions
  /// Safety thresholds sent with every request; nil leaves Google's defaults.
  public let safetySettings: [SafetySetting]?
  /// Google's tools declared on every request (search grounding, code
  /// execution, URL context), beside the session's own functions.
  public let serverTools: [ServerTool]
  /// Where `countTokens` reports retries; requests from a session report
  /// through the session's handler.
  public let logHandler: LogHandler
  /// Name, server, options, credential and transport, as every remote model holds them.
  let shell: RemoteModelShell
  /// The backend with the environment's project and location.
  let resolvedBackend: ResolvedBackend
  var apiKey: APIKey? { shell.apiKey }

  /// The default server when neither the parameter nor `GOOGLE_GEMINI_BASE_URL` names one.
  public static let defaultBaseURL =
    URL(string: "https://generativelanguage.googleapis.com") ?? URL(fileURLWithPath: "/")

  /// A Gemini model.
  /// - Parameters:
  ///   - name: The model, with or without the `models/` prefix.
  ///   - apiKey: The Gemini API key; nil reads `GEMINI_API_KEY`, then
  ///     `GOOGLE_API_KEY`. Without a key or `authorization` the model is
  ///     `.unavailable(.missingAPIKey)`. Never sent to Vertex AI.
  ///   - baseURL: The server; nil reads `GOOGLE_GEMINI_BASE_URL` (the
  ///     google-genai convention; `GOOGLE_VERTEX_BASE_URL` for Vertex AI),
  ///     then uses Google's host for the backend.
  ///   - backend: `.googleAI` (the Gemini Developer API) by default, or
  ///     `.vertexAI(project:location:)`.
  ///   - authorization: The credential; given, it wins over `apiKey` and the
  ///     environment. Vertex AI needs a token (`.bearerToken { ... }` or
  ///     `.metadataServer`; no key of any kind is sent there), else the model
  ///     is `.unavailable(.missingCredential)`.
  ///   - apiVersion: nil for `"v1beta"` on the Gemini API, where every
  ///     current feature lives, and `"v1"` on Vertex AI.
  ///   - requestOptions: Timeouts and retries.
  ///   - safetySettings: Thresholds sent with every request.
  ///   - serverTools: Google's tools, declared on every request.
  ///   - logHandler: Where `countTokens` reports retries.
  public init(
    name: String, apiKey: String? = nil, baseURL: URL? = nil, backend: GeminiBackend = .googleAI,
    authorization: Credential? = nil, apiVersion: String? = nil,
    requestOptions: RequestOptions = RequestOptions(), safetySettings: [SafetySetting]? = nil,
    serverTools: [ServerTool] = [], logHandler: LogHandler = .standardError
  ) {
    self.init(
      name: name, apiKey: apiKey, baseURL: baseURL, backend: backend, authorization: authorization,
      apiVersion: apiVersion, requestOptions: requestOptions, safetySettings: safetySettings,
      serverTools: serverTools, logHandler: logHandler, environment: ProcessInfo.processInfo.environment)
  }

  /// The designated initializer, with the environment passed in so tests can
  /// check the fallbacks (keys, base URLs, `GOOGLE_CLOUD_PROJECT`,
  /// `GOOGLE_CLOUD_LOCATION`, `GCE_METADATA_HOST`) without touching the
  /// process's own.
  init(
    name: String, apiKey: String? = nil, baseURL: URL? = nil, backend: GeminiBackend = .googleAI,
    authorization: Credential? = nil, apiVersion: String? = nil,
    requestOptions: RequestOptions = RequestOptions(), safetySettings: [SafetySetting]? = nil,
    serverTools: [ServerTool] = [], logHandler: LogHandler = .standardError,
    environment: [String: String]
  ) {
    let resolved = ResolvedBackend(backend, environment: environment)
    self.name = name
    self.backend = backend
    self.resolvedBackend = resolved
    self.baseURL = baseURL ?? resolved.defaultBaseURL(environment: environment) ?? Self.defaultBaseURL
    self.apiVersion = apiVersion.flatMap { $0.isEmpty ? nil : $0 } ?? resolved.defaultAPIVersion
    self.requestOptions = requestOptions
    self.safetySettings = safetySettings
    self.serverTools = serverTools
    self.logHandler = logHandler
    // An explicit credential first; a key only for the Gemini API. Vertex AI
    // refuses API keys on its project paths (401), so none is ever sent there.
    let credential: Credential?
    if resolved.isVertex {
      credential = authorization.flatMap { $0.isAPIKey ? nil : $0 }
    } else {
      credential = authorization ?? (APIKey(apiKey) ?? APIKey.fromEnvironment(environment)).map { .apiKey($0.value) }
    }
    self.shell = RemoteModelShell(
      name: name, baseURL: self.baseURL, requestOptions: requestOptions, credential: credential,
      keyPlacement: .header("x-goog-api-key"), environment: environment, log: logHandler)
    self.client = GeminiClient(
      shell: shell,
      endpoint: GeminiEndpoint(
        baseURL: self.baseURL, apiVersion: self.apiVersion, modelName: name, backend: resolved))
  }

  /// The model name: what `GenerateContentResponse.modelVersion` says when
  /// this model answers and the server does not name itself.
  public var modelVersion: String { name }

  /// Always `.cloud`: only being offline lets a hybrid fall back from it.
  public var placement: ModelPlacement { .cloud }

  /// `.available` when a credential is set (and, on Vertex AI, a project and
  /// a usable location); otherwise `.missingAPIKey`, `.missingCredential`,
  /// `.missingProject` or `.invalidBaseURL`. Never touches the network.
  public var availability: Availability {
    if case .vertexAI(let project, let location) = resolvedBackend.kind {
      if project == nil { return .unavailable(.missingProject) }
      if !ResolvedBackend.isValidLocation(location) { return .unavailable(.invalidBaseURL) }
      if shell.authorizer == nil { return .unavailable(.missingCredential) }
      return .available
    }
    return shell.authorizer == nil ? .unavailable(.missingAPIKey) : .available
  }

  /// `.offline` while this server's origin is remembered as offline (see
  /// `RequestOptions.remembersOffline`), else the 429 while this server,
  /// model and key are remembered as rate limited (a 429 that carried
  /// `RetryInfo`, for its `retryDelay`), so that a hybrid with another model
  /// at hand goes straight to it (the rate limit only under a policy that
  /// falls back on `.rateLimited`); nil otherwise. Never waits.
  public var rememberedFailure: (any Error)? {
    guard availability.isAvailable else { return nil }
    return shell.rememberedOffline ?? shell.rateLimits?.verdict
  }

  /// Forgets a remembered rate limit of this server, model and credential,
  /// so that the next request asks the server again even inside a hybrid
  /// that would otherwise go straight to its other model.
  public func clearRememberedRateLimit() {
    shell.rateLimits?.answered()
  }

  /// Answers with `:generateContent`.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    try checkAvailable()
    try request.options.gemini?.validate()
    let client = client
    return try await client.generateContent(
      try GenerateContentRequest(
        request, safetySettings: safetySettings, serverTools: serverTools,
        producer: client.endpoint.producer,
        inlineMediaLimit: requestOptions.maximumInlineMediaBytes),
      log: request.logHandler)
  }

  /// Streams with `:streamGenerateContent?alt=sse`, one delta per event.
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    let body: GenerateContentRequest
    let client = client
    do {
      try checkAvailable()
      try request.options.gemini?.validate()
      body = try GenerateContentRequest(
        request, safetySettings: safetySettings, serverTools: serverTools,
        producer: client.endpoint.producer,
        inlineMediaLimit: requestOptions.maximumInlineMediaBytes)
    } catch {
      return .failing(error)
    }
    return client.streamGenerateContent(body, log: request.logHandler)
  }

  /// How many tokens `transcript` (instructions and every turn, attachments
  /// included) takes as a prompt, from `:countTokens`.
  /// Inline media past `RequestOptions.maximumInlineMediaBytes` is
  /// `requestTooLarge`, as for a generation, and nothing is sent; so is a
  /// call or output nested past `JSONValue.maximumDepth` (`invalidTranscript`).
  public func countTokens(_ transcript: Transcript) async throws -> Int {
    try checkAvailable()
    try InlineMediaSize.check(transcript, limit: requestOptions.maximumInlineMediaBytes)
    try transcript.checkNesting()
    let client = client
    let endpoint = client.endpoint
    return try await client.countTokens(
      CountTokensRequest(
        transcript: transcript, modelPath: endpoint.modelPath, vertex: endpoint.isVertex,
        producer: endpoint.producer),
      log: logHandler)
  }

  /// How many tokens `text` takes as a single user prompt.
  public func countTokens(_ text: String) async throws -> Int {
    try await countTokens(Transcript(entries: [.prompt(text)]))
  }

  private func checkAvailable() throws(HybridInferenceError) {
    if case .unavailable(let reason) = availability { throw .unavailable(model: name, reason: reason) }
  }

  /// The client of this model's endpoint, made once with the model (its
  /// URLs, reporters and error mapping are the same for every request).
  let client: GeminiClient
}
