import Foundation
import HybridInferenceCore
import HybridInferenceRemote

/// A Gemini model behind the Gemini Developer API's REST interface.
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
/// after the request `.connectionLost` (never retried for a generation, which
/// the server may have run), one that ends a stream before its finish reason
/// `.responseTruncated`: reached, so never offline. An
/// offline verdict is remembered per origin (`RequestOptions.remembersOffline`,
/// `rememberedFailure`) until a background TCP probe or a request gets through.
///
/// The key stays with its origin: a redirect to another scheme, host or port
/// is refused (`.redirectRefused`), and a plain `http://` base URL is refused
/// (`.insecureBaseURL`) unless it is this machine.
///
/// A value: copies share one URL session, released with the last copy.
public struct CloudGeminiModel: LanguageModel {
  /// The model name as given (`"gemini-3.1-flash-lite"`); also `modelVersion`.
  public let name: String
  /// The server, without the API version (`https://generativelanguage.googleapis.com`).
  public let baseURL: URL
  /// The API version path segment (`"v1beta"`).
  public let apiVersion: String
  /// Timeouts and retries.
  public let requestOptions: RequestOptions
  /// Safety thresholds sent with every request; nil leaves Google's defaults.
  public let safetySettings: [SafetySetting]?
  /// Where `countTokens` reports retries; requests from a session report
  /// through the session's handler.
  public let logHandler: LogHandler
  let apiKey: APIKey?
  private let transport: HTTPTransport

  /// The default server when neither the parameter nor `GOOGLE_GEMINI_BASE_URL` names one.
  public static let defaultBaseURL =
    URL(string: "https://generativelanguage.googleapis.com") ?? URL(fileURLWithPath: "/")

  /// A Gemini model.
  /// - Parameters:
  ///   - name: The model, with or without the `models/` prefix.
  ///   - apiKey: The key; nil reads `GEMINI_API_KEY`, then `GOOGLE_API_KEY`.
  ///     Without one the model is `.unavailable(.missingAPIKey)`.
  ///   - baseURL: The server; nil reads `GOOGLE_GEMINI_BASE_URL` (the
  ///     google-genai convention), then uses `defaultBaseURL`.
  ///   - apiVersion: `"v1beta"` by default, where every current feature lives.
  ///   - requestOptions: Timeouts and retries.
  ///   - safetySettings: Thresholds sent with every request.
  ///   - logHandler: Where `countTokens` reports retries.
  public init(
    name: String, apiKey: String? = nil, baseURL: URL? = nil, apiVersion: String = "v1beta",
    requestOptions: RequestOptions = RequestOptions(), safetySettings: [SafetySetting]? = nil,
    logHandler: LogHandler = .standardError
  ) {
    self.init(
      name: name, apiKey: apiKey, baseURL: baseURL, apiVersion: apiVersion,
      requestOptions: requestOptions, safetySettings: safetySettings, logHandler: logHandler,
      environment: ProcessInfo.processInfo.environment)
  }

  /// The designated initializer, with the environment passed in so tests can
  /// check the fallbacks without touching the process's own.
  init(
    name: String, apiKey: String?, baseURL: URL?, apiVersion: String,
    requestOptions: RequestOptions, safetySettings: [SafetySetting]?, logHandler: LogHandler,
    environment: [String: String]
  ) {
    self.name = name
    self.apiKey = APIKey(apiKey) ?? APIKey.fromEnvironment(environment)
    let environmentURL = environment["GOOGLE_GEMINI_BASE_URL"].flatMap {
      $0.isEmpty ? nil : URL(string: $0)
    }
    self.baseURL = baseURL ?? environmentURL ?? Self.defaultBaseURL
    self.apiVersion = apiVersion
    self.requestOptions = requestOptions
    self.safetySettings = safetySettings
    self.logHandler = logHandler
    self.transport = HTTPTransport()
  }

  /// The model name: what `GenerateContentResponse.modelVersion` says when
  /// this model answers and the server does not name itself.
  public var modelVersion: String { name }

  /// Always `.cloud`: only being offline lets a hybrid fall back from it.
  public var placement: ModelPlacement { .cloud }

  /// `.available` when a key is set, `.unavailable(.missingAPIKey)` otherwise.
  /// Never touches the network.
  public var availability: Availability {
    apiKey == nil ? .unavailable(.missingAPIKey) : .available
  }

  /// `.offline` while this server's origin is remembered as offline (see
  /// `RequestOptions.remembersOffline`), so that a hybrid with another
  /// model at hand goes straight to it; nil otherwise. Never waits.
  public var rememberedFailure: (any Error)? {
    guard apiKey != nil, let reporter = client.reachability,
      let error = reporter.memory.verdict(for: reporter.origin)
    else { return nil }
    return HybridInferenceError.offline(error)
  }

  /// Answers with `:generateContent`.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    try request.options.gemini?.validate()
    return try await client.generateContent(
      try GenerateContentRequest(request, safetySettings: safetySettings), log: request.logHandler)
  }

  /// Streams with `:streamGenerateContent?alt=sse`, one delta per event.
  public func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    let body: GenerateContentRequest
    do {
      try request.options.gemini?.validate()
      body = try GenerateContentRequest(request, safetySettings: safetySettings)
    } catch {
      return .failing(error)
    }
    return client.streamGenerateContent(body, log: request.logHandler)
  }

  /// How many tokens `transcript` (instructions and every turn) takes as a
  /// prompt, from `:countTokens`.
  public func countTokens(_ transcript: Transcript) async throws -> Int {
    try await client.countTokens(
      CountTokensRequest(transcript: transcript, modelPath: client.endpoint.modelPath),
      log: logHandler)
  }

  /// How many tokens `text` takes as a single user prompt.
  public func countTokens(_ text: String) async throws -> Int {
    try await countTokens(Transcript(entries: [.prompt(text)]))
  }

  var client: GeminiClient {
    let reachability = Origin(baseURL).flatMap { origin in
      requestOptions.remembersOffline
        ? ReachabilityMemory.Reporter(
          memory: .shared, origin: origin, probeTimeout: requestOptions.connectTimeout)
        : nil
    }
    return GeminiClient(
      modelName: name,
      endpoint: GeminiEndpoint(baseURL: baseURL, apiVersion: apiVersion, modelName: name),
      apiKey: apiKey, options: requestOptions, transport: transport, reachability: reachability)
  }
}
