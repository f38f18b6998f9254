import Foundation
import HybridInferenceCore
import HybridInferenceRemote

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
    try await call.streamWithRetries(request, log: log) {
      GeminiStreamAttempt(client: self, continuation: continuation)
    }
  }
}

/// One attempt at a stream: the shared `RemoteCall` parses the SSE body as
/// it arrives; this checks and forwards each event.
private struct GeminiStreamAttempt: RemoteStreamAttempt {
  let client: GeminiClient
  private var delivery: StreamDelivery
  var deliveredContent: Bool { delivery.deliveredContent }

  init(client: GeminiClient, continuation: ResponseDeltaStream.Continuation) {
    self.client = client
    self.delivery = StreamDelivery(continuation: continuation)
  }

  mutating func run(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws {
    try await client.call.stream(request, deadline: deadline) { try handle($0) }
    try delivery.finish()
  }

  private mutating func handle(_ event: SSEEvent) throws {
    // A bare JSON error line is read even when the event also has `data:`
    // lines (a server that writes its error without ending the event first).
    if !event.otherLines.isEmpty {
      let text = event.otherLines.joined(separator: "\n")
      if let error = RemoteErrorMapping.streamError(Data(text.utf8), apiKey: client.apiKey) {
        throw error
      }
    }
    if event.hasData {
      let data = event.trimmedData
      if data.isEmpty || data == "[DONE]" { return }
      let json = Data(data.utf8)
      if SSEEvent.opensErrorObject(data), let error = RemoteErrorMapping.streamError(json, apiKey: client.apiKey) {
        throw error
      }
      var delta = try RemoteCall.decode(GenerateContentResponse.self, from: json)
      if delta.modelVersion.isEmpty { delta.modelVersion = client.modelName }
      try delivery.deliver(delta)
    } else if !event.otherLines.isEmpty {
      // Not an SSE event, and not an error either.
      let start = event.trimmedOtherLines.first
      if start == "{" || start == "[" {
        throw HybridInferenceError.malformedResponse("the stream carried JSON outside an event")
      }
    }
  }
}
