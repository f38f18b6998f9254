import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension GeminiClient {
  /// `:streamGenerateContent?alt=sse`: the answer as deltas, each delivered
  /// as soon as its event has been read off the socket.
  ///
  /// Events without content (usage or metadata only) are held back until the
  /// first content arrives, so a failed attempt that delivered nothing can be
  /// retried without the caller seeing anything twice. Once content has been
  /// delivered, a failure ends the stream and is never retried.
  func streamGenerateContent(_ body: GenerateContentRequest, log: LogHandler)
    -> ResponseDeltaStream
  {
    .producing { continuation in try await runStream(body, log: log, into: continuation) }
  }

  private func runStream(
    _ body: GenerateContentRequest, log: LogHandler,
    into continuation: ResponseDeltaStream.Continuation
  ) async throws {
    let request = try endpoint.request(
      .streamGenerateContent, body: body, apiKey: try key(), timeout: options.timeout)
    let loop = retryLoop(log: log)
    try await loop.run { _ in
      var attempt = StreamAttempt(client: self, continuation: continuation)
      do {
        try await attempt.run(request, deadline: loop.deadline)
      } catch {
        if attempt.deliveredContent { throw DeliveredStreamFailure(error: error) }
        throw error
      }
    }
  }
}

/// One attempt at a stream: parses the SSE body as it arrives, checks and
/// forwards each event.
private struct StreamAttempt {
  let client: GeminiClient
  let continuation: ResponseDeltaStream.Continuation
  private var parser: SSEParser
  private var accumulator = ResponseAccumulator()
  private var heldBack: [GenerateContentResponse] = []
  private var eventCount = 0
  private(set) var deliveredContent = false

  init(
    client: GeminiClient,
    continuation: ResponseDeltaStream.Continuation
  ) {
    self.client = client
    self.continuation = continuation
    self.parser = SSEParser(maximumEventBytes: client.options.maximumEventBytes)
  }

  mutating func run(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws {
    var head: ResponseHead?
    var connected = false
    var errorBody = Data()
    do {
      let exchange = client.transport.exchange(
        request, connectTimeout: client.options.connectTimeout, deadline: deadline)
      defer { exchange.cancel() }
      for try await event in exchange.events {
        switch event {
        case .connected:
          connected = true
          client.reachability?.reachable()
        case .head(let received):
          head = received
        case .body(let data):
          if let head, (200..<300).contains(head.statusCode) {
            for sse in try feed(data) { try handle(sse) }
          } else {
            let limit = client.options.maximumResponseBytes
            guard data.count <= limit - errorBody.count else {
              throw HybridInferenceError.responseTooLarge(limit: limit)
            }
            errorBody.append(data)
          }
        }
      }
    } catch let error as HybridInferenceError {
      throw error
    } catch {
      let mapped = CloudErrorMapping.transportError(
        error, connected: connected, receivedResponse: head != nil, timeout: client.options.timeout)
      client.reachability?.failed(mapped)
      throw mapped
    }
    try Task.checkCancellation()
    guard let head else {
      throw HybridInferenceError.malformedResponse("the server closed the connection without a response")
    }
    guard (200..<300).contains(head.statusCode) else {
      throw CloudErrorMapping.apiError(
        status: head.statusCode, contentType: head.contentType, body: errorBody,
        apiKey: client.apiKey)
    }
    for sse in try feed(nil) { try handle(sse) }
    try finish()
  }

  /// Feeds body bytes to the parser (nil: the body has ended), with its
  /// size limit as the library's error.
  private mutating func feed(_ data: Data?) throws(HybridInferenceError) -> [SSEEvent] {
    do {
      guard let data else { return try parser.finish() }
      return try parser.feed(data)
    } catch {
      switch error {
      case .eventTooLarge(let limit): throw .responseTooLarge(limit: limit)
      }
    }
  }

  private mutating func handle(_ event: SSEEvent) throws {
    // A bare JSON error line is read even when the event also has `data:`
    // lines (a server that writes its error without ending the event first).
    if !event.otherLines.isEmpty {
      let text = event.otherLines.joined(separator: "\n")
      if let error = CloudErrorMapping.streamError(Data(text.utf8), apiKey: client.apiKey) {
        throw error
      }
    }
    if event.hasData {
      let data = event.trimmedData
      if data.isEmpty || data == "[DONE]" { return }
      let json = Data(data.utf8)
      if SSEEvent.opensErrorObject(data), let error = CloudErrorMapping.streamError(json, apiKey: client.apiKey) {
        throw error
      }
      var delta = try client.decode(GenerateContentResponse.self, from: json)
      if delta.modelVersion.isEmpty { delta.modelVersion = client.modelName }
      try deliver(delta)
    } else if !event.otherLines.isEmpty {
      // Not an SSE event, and not an error either.
      let start = event.trimmedOtherLines.first
      if start == "{" || start == "[" {
        throw HybridInferenceError.malformedResponse("the stream carried JSON outside an event")
      }
    }
  }

  private mutating func deliver(_ delta: GenerateContentResponse) throws {
    eventCount += 1
    accumulator.add(delta)
    if let accumulated = accumulator.response {
      try ResponseChecks.checkDelta(delta, accumulated: accumulated)
    }
    let hasContent = delta.candidates.contains { !($0.content?.parts.isEmpty ?? true) }
    guard hasContent || deliveredContent else {
      heldBack.append(delta)
      return
    }
    for held in heldBack { continuation.yield(held) }
    heldBack.removeAll()
    continuation.yield(delta)
    deliveredContent = true
  }

  private mutating func finish() throws {
    guard eventCount > 0, let accumulated = accumulator.response else {
      throw HybridInferenceError.malformedResponse("the stream ended without an event")
    }
    if accumulated.candidates.isEmpty {
      if accumulated.promptFeedback != nil {
        throw HybridInferenceError.promptBlocked(reason: nil, response: accumulated)
      }
      throw HybridInferenceError.malformedResponse("the stream ended without a candidate")
    }
    try ResponseChecks.checkNotEmpty(accumulated)
    for held in heldBack { continuation.yield(held) }
    heldBack.removeAll()
  }
}
