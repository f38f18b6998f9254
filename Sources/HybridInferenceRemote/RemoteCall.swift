import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One HTTP backend's way of running a call over the shared transport: the
/// unary exchange, the streamed (SSE) exchange, and the retry loop around
/// either, with the same offline, reachability and size rules for every
/// backend.
///
/// Why one type: the Gemini and OpenAI-compatible clients differ only in the
/// URL, the headers, the JSON and the error body; how bytes are read,
/// bounded, timed out, classified as offline and retried must not differ,
/// so it is written once here and each client supplies `apiError`.
package struct RemoteCall: Sendable {
  /// The model name used in retry log lines.
  let modelName: String
  package let options: RequestOptions
  let transport: HTTPTransport
  /// Where requests report whether they reached the server; nil when
  /// `options.remembersOffline` is off.
  package let reachability: ReachabilityMemory.Reporter?
  /// Where a 429 with a retry delay is remembered, and a 2xx clears it.
  package let rateLimits: RateLimitMemory.Reporter?
  /// The typed error of a non-2xx response, from its head and (bounded) body;
  /// the backend's own error envelope, with its key redacted.
  let apiError: @Sendable (ResponseHead, Data) -> HybridInferenceError
  /// Signs each attempt's request (`RemoteAuthorizer`); nil: sent as built.
  package let authorizer: RemoteAuthorizer?

  package init(
    modelName: String, options: RequestOptions, transport: HTTPTransport,
    reachability: ReachabilityMemory.Reporter?, authorizer: RemoteAuthorizer? = nil,
    rateLimits: RateLimitMemory.Reporter? = nil,
    apiError: @escaping @Sendable (ResponseHead, Data) -> HybridInferenceError
  ) {
    self.modelName = modelName
    self.options = options
    self.transport = transport
    self.reachability = reachability
    self.authorizer = authorizer
    self.rateLimits = rateLimits
    self.apiError = apiError
  }

  /// Sends `request` through `exchange` signed by the authorizer; when the
  /// server answers 401 to a token, once more with a token other than the
  /// refused one (the provider asked again, or the one a concurrent request
  /// already got). A 401 comes before any content, so nothing was delivered
  /// and the request had not run. A second 401 is thrown as it is.
  ///
  /// Getting a token counts against the call's `deadline`: a provider that
  /// never returns ends the call with `.timedOut` at the deadline, as a
  /// server that never answers would, rather than holding it for good.
  /// Options no answer can meet are refused first, before a token is asked
  /// for or anything is sent.
  private func signed<Value>(
    _ request: URLRequest, deadline: ContinuousClock.Instant, _ exchange: (URLRequest) async throws -> Value
  ) async throws -> Value {
    try options.validate()
    guard let authorizer else { return try await exchange(request) }
    let timedOut = HybridInferenceError.timedOut(options.timeout)
    var first = request
    let grant = try await authorizer.sign(&first, deadline: deadline, timedOut: timedOut)
    do {
      return try await exchange(first)
    } catch HybridInferenceError.cloudAPI(let error) where error.httpStatus == 401 {
      var again = request
      guard try await authorizer.resign(&again, refused: grant, deadline: deadline, timedOut: timedOut) != nil
      else {
        throw HybridInferenceError.cloudAPI(error)
      }
      return try await exchange(again)
    }
  }

  /// The attempts of one call, which share one deadline.
  /// - Parameter isIdempotent: Whether the call may be sent again after it
  ///   could have reached the server (`RetryLoop.isIdempotent`); false, the
  ///   default, for every generation.
  package func retryLoop(log: LogHandler, isIdempotent: Bool = false) -> RetryLoop {
    RetryLoop(
      policy: options.retryPolicy, deadline: ContinuousClock.now.advanced(byWait: options.timeout),
      modelName: modelName, log: log, isIdempotent: isIdempotent)
  }

  /// One unary exchange: the body of a 2xx response, or the typed error.
  ///
  /// The body is held whole until it ends, so it is bounded by
  /// `RequestOptions.maximumResponseBytes`: the first byte past the limit
  /// stops the exchange (whatever the status) with `.responseTooLarge`.
  package func unary(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws -> Data {
    try await signed(request, deadline: deadline) { try await unsigned($0, deadline: deadline) }
  }

  private func unsigned(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws -> Data {
    var body = Data()
    let head = try await run(request, deadline: deadline) { _, data in
      guard data.count <= options.maximumResponseBytes - body.count else {
        throw HybridInferenceError.responseTooLarge(limit: options.maximumResponseBytes)
      }
      body.append(data)
    }
    guard (200..<300).contains(head.statusCode) else { throw failure(head, body) }
    rateLimits?.answered()
    guard !body.isEmpty else {
      throw HybridInferenceError.malformedResponse("HTTP \(head.statusCode) with an empty body")
    }
    return body
  }

  /// One streamed exchange: each SSE event of a 2xx body goes to `handle`
  /// as soon as it has been read off the socket (the last one once the body
  /// has ended); a non-2xx response is read whole (bounded) and thrown as
  /// `apiError`. An event over `RequestOptions.maximumEventBytes`, or a body
  /// over `RequestOptions.maximumStreamedResponseBytes` in all, is
  /// `.responseTooLarge`, and the exchange is cancelled, which closes its
  /// connection.
  package func stream(
    _ request: URLRequest, deadline: ContinuousClock.Instant,
    handle: (SSEEvent) throws -> Void
  ) async throws {
    try await signed(request, deadline: deadline) { try await unsigned($0, deadline: deadline, handle: handle) }
  }

  private func unsigned(
    _ request: URLRequest, deadline: ContinuousClock.Instant, handle: (SSEEvent) throws -> Void
  ) async throws {
    var parser = SSEParser(maximumEventBytes: options.maximumEventBytes)
    var errorBody = Data()
    // The body's bytes as they arrive, framing included: the count is what
    // the process took in, whatever the events hold, and it needs no parsing.
    var streamed = 0
    let limit = options.maximumStreamedResponseBytes
    let head = try await run(request, deadline: deadline) { head, data in
      if (200..<300).contains(head.statusCode) {
        guard data.count <= limit - streamed else { throw HybridInferenceError.responseTooLarge(limit: limit) }
        streamed += data.count
        for event in try Self.feed(&parser, data) { try handle(event) }
      } else {
        let limit = options.maximumResponseBytes
        guard data.count <= limit - errorBody.count else {
          throw HybridInferenceError.responseTooLarge(limit: limit)
        }
        errorBody.append(data)
      }
    }
    guard (200..<300).contains(head.statusCode) else { throw failure(head, errorBody) }
    rateLimits?.answered()
    for event in try Self.feed(&parser, nil) { try handle(event) }
  }

  /// The typed error of a non-2xx response, reported to the rate-limit memory.
  private func failure(_ head: ResponseHead, _ body: Data) -> HybridInferenceError {
    let error = apiError(head, body)
    rateLimits?.failed(error)
    return error
  }

  /// A streamed call: fresh attempts under the retry loop, sharing its
  /// deadline. A failure after an attempt delivered content ends the stream
  /// (`DeliveredStreamFailure`): the caller has seen text, and a retry
  /// would show it twice.
  package func streamWithRetries<Attempt: RemoteStreamAttempt>(
    _ request: URLRequest, log: LogHandler, makeAttempt: () -> Attempt
  ) async throws {
    let loop = retryLoop(log: log)
    try await loop.run { _ in
      var attempt = makeAttempt()
      do {
        try await attempt.run(request, deadline: loop.deadline)
      } catch {
        if attempt.deliveredContent { throw DeliveredStreamFailure(error: error) }
        throw error
      }
    }
  }

  /// Runs the exchange, handing each body chunk (with the head) to `body`;
  /// returns the head. Transport failures become the library's errors
  /// (offline only before the request went out) and are reported to the
  /// reachability memory; errors thrown by `body` pass through.
  private func run(
    _ request: URLRequest, deadline: ContinuousClock.Instant,
    body: (ResponseHead, Data) throws -> Void
  ) async throws -> ResponseHead {
    var head: ResponseHead?
    var connected = false
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
          // (Bytes before a head cannot happen; if they did, they would be
          // treated as an error body.)
          try body(head ?? ResponseHead(statusCode: 0), data)
        }
      }
    } catch let error as HybridInferenceError {
      throw error
    } catch {
      let mapped = RemoteErrorMapping.transportError(
        error, connected: connected, receivedResponse: head != nil,
        timeout: WaitLimits.clamped(options.timeout))
      reachability?.failed(mapped)
      throw mapped
    }
    try Task.checkCancellation()
    guard let head else {
      throw HybridInferenceError.malformedResponse("the server closed the connection without a response")
    }
    return head
  }

  /// Feeds body bytes to the parser (nil: the body has ended), with its
  /// size limit as the library's error.
  private static func feed(_ parser: inout SSEParser, _ data: Data?) throws(HybridInferenceError)
    -> [SSEEvent]
  {
    do {
      guard let data else { return try parser.finish() }
      return try parser.feed(data)
    } catch {
      switch error {
      case .eventTooLarge(let limit): throw .responseTooLarge(limit: limit)
      }
    }
  }

  /// Decodes a JSON body, or throws `.malformedResponse` saying where it
  /// went wrong (never the data itself).
  package static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws(HybridInferenceError)
    -> Value
  {
    do {
      return try JSONDecoder().decode(type, from: data)
    } catch {
      throw .malformedResponse("the body is not a valid \(type): \(summary(of: error))")
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
    // Keys of a JSON object are the server's text; the path is bounded and inert.
    let path = ServerText.inert(context.codingPath.map(\.stringValue).joined(separator: "."), limit: 512)
    let what: String
    switch error {
    case .dataCorrupted: what = "not valid JSON or corrupt value"
    case .keyNotFound(let key, _): what = "missing \(ServerText.inert(key.stringValue, limit: 256))"
    case .typeMismatch(let type, _): what = "expected \(type)"
    case .valueNotFound(let type, _): what = "null where \(type) was expected"
    @unknown default: what = "decoding failed"
    }
    return path.isEmpty ? what : "\(what) at \(path)"
  }
}

/// One attempt of a backend's streamed call (`RemoteCall.streamWithRetries`):
/// it runs the exchange, decodes each event and hands it on.
package protocol RemoteStreamAttempt {
  /// Whether the caller has been given content (then no retry may follow).
  var deliveredContent: Bool { get }
  mutating func run(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws
}
