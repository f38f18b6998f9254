import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The REST client behind `CloudGeminiModel`: builds each call, runs its
/// attempts, and turns what comes back into responses or typed errors.
struct GeminiClient: Sendable {
  let modelName: String
  let endpoint: GeminiEndpoint
  let apiKey: APIKey?
  let options: RequestOptions
  let transport: HTTPTransport
  /// Where requests report whether they reached the server; nil when
  /// `options.remembersOffline` is off.
  let reachability: ReachabilityMemory.Reporter?

  /// `:generateContent`: one complete answer.
  func generateContent(_ body: GenerateContentRequest, log: LogHandler) async throws
    -> GenerateContentResponse
  {
    let request = try endpoint.request(
      .generateContent, body: body, apiKey: try key(), timeout: options.timeout)
    let loop = retryLoop(log: log)
    return try await loop.run { _ in
      let data = try await exchange(request, deadline: loop.deadline)
      var response = try decode(GenerateContentResponse.self, from: data)
      if response.modelVersion.isEmpty { response.modelVersion = modelName }
      try ResponseChecks.checkComplete(response)
      return response
    }
  }

  /// `:countTokens`: how many tokens the contents would take as a prompt.
  func countTokens(_ body: CountTokensRequest, log: LogHandler) async throws -> Int {
    let request = try endpoint.request(
      .countTokens, body: body, apiKey: try key(), timeout: options.timeout)
    let loop = retryLoop(log: log)
    return try await loop.run { _ in
      let data = try await exchange(request, deadline: loop.deadline)
      return try decode(CountTokensResponse.self, from: data).totalTokens
    }
  }

  func key() throws(HybridInferenceError) -> APIKey {
    guard let apiKey else { throw .unavailable(model: modelName, reason: .missingAPIKey) }
    return apiKey
  }

  /// The attempts of one call, which share one deadline.
  func retryLoop(log: LogHandler) -> RetryLoop {
    RetryLoop(
      policy: options.retryPolicy, deadline: ContinuousClock.now + options.timeout,
      modelName: modelName, log: log)
  }

  /// One unary exchange: the body of a 2xx response, or the typed error.
  ///
  /// The body is held whole until it ends, so it is bounded by
  /// `RequestOptions.maximumResponseBytes`: the first byte past the limit
  /// stops the exchange (whatever the status) with `.responseTooLarge`.
  private func exchange(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws
    -> Data
  {
    var head: ResponseHead?
    var connected = false
    var body = Data()
    do {
      let exchange = transport.exchange(
        request, connectTimeout: options.connectTimeout, deadline: deadline)
      defer { exchange.cancel() }
      for try await event in exchange.events {
        switch event {
        case .connected:
          connected = true
          reachability?.reachable()
        case .head(let received): head = received
        case .body(let data):
          guard data.count <= options.maximumResponseBytes - body.count else {
            throw HybridInferenceError.responseTooLarge(limit: options.maximumResponseBytes)
          }
          body.append(data)
        }
      }
    } catch let error as HybridInferenceError {
      throw error
    } catch {
      let mapped = CloudErrorMapping.transportError(
        error, connected: connected, receivedResponse: head != nil, timeout: options.timeout)
      reachability?.failed(mapped)
      throw mapped
    }
    try Task.checkCancellation()
    guard let head else {
      throw HybridInferenceError.malformedResponse("the server closed the connection without a response")
    }
    guard (200..<300).contains(head.statusCode) else {
      throw CloudErrorMapping.apiError(
        status: head.statusCode, contentType: head.contentType, body: body, apiKey: apiKey)
    }
    guard !body.isEmpty else {
      throw HybridInferenceError.malformedResponse("HTTP \(head.statusCode) with an empty body")
    }
    return body
  }

  func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws(HybridInferenceError)
    -> Value
  {
    do {
      return try JSONDecoder().decode(type, from: data)
    } catch {
      throw .malformedResponse("the body is not a valid \(type): \(Self.summary(of: error))")
    }
  }

  /// A one-line account of a decoding failure, without the data itself.
  static func summary(of error: any Error) -> String {
    guard let error = error as? DecodingError else { return "\(type(of: error))" }
    let context: DecodingError.Context
    switch error {
    case .dataCorrupted(let c), .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c):
      context = c
    @unknown default:
      return "decoding failed"
    }
    let path = context.codingPath.map(\.stringValue).joined(separator: ".")
    let what: String
    switch error {
    case .dataCorrupted: what = "not valid JSON or corrupt value"
    case .keyNotFound(let key, _): what = "missing \(key.stringValue)"
    case .typeMismatch(let type, _): what = "expected \(type)"
    case .valueNotFound(let type, _): what = "null where \(type) was expected"
    @unknown default: what = "decoding failed"
    }
    return path.isEmpty ? what : "\(what) at \(path)"
  }
}
