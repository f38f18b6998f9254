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
      .streamGenerateContent, body: body, tokens: usesTokens, timeout: options.timeout)
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
    let secrets = client.secrets
    let payload = try event.payload { RemoteErrorMapping.streamError($0, secrets: secrets) }
    guard case .json(let json) = payload else { return }
    var delta = try RemoteCall.decode(GenerateContentResponse.self, from: json)
    if delta.modelVersion.isEmpty { delta.modelVersion = client.modelName }
    delta.placement = .cloud
    delta.producer = client.endpoint.producer
    try delivery.deliver(delta)
  }
}
