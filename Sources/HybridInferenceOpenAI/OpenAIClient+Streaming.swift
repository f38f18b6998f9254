import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension OpenAIClient {
  /// `POST /chat/completions` with `stream: true`: the answer as deltas, each
  /// delivered as soon as its SSE event has been read; `data: [DONE]` ends it.
  ///
  /// The same promise as the Gemini stream (`StreamDelivery`): chunks
  /// without content (the role-only first chunk) are held back until content
  /// arrives, so a failed attempt that delivered nothing is retried unseen;
  /// once content has been delivered, a failure ends the stream.
  func streamChatCompletion(_ body: ChatCompletionRequest, log: LogHandler) -> ResponseDeltaStream {
    .producing { continuation in
      let request = try endpoint.request(
        "chat/completions", body: body, credentialed: credentialed, streaming: true, timeout: call.options.timeout)
      try await call.streamWithRetries(request, log: log) {
        OpenAIStreamAttempt(client: self, continuation: continuation)
      }
    }
  }
}

/// One attempt at a stream: the shared `RemoteCall` parses the SSE body as
/// it arrives; this decodes each chunk and hands it to `StreamDelivery`.
private struct OpenAIStreamAttempt: RemoteStreamAttempt {
  let client: OpenAIClient
  private var delivery: StreamDelivery
  private var sawDone = false
  /// Function calls arrive in pieces; they are delivered whole, at the end.
  private var toolCalls = ToolCallAssembly()
  private var lastModelVersion: String?
  var deliveredContent: Bool { delivery.deliveredContent }

  init(client: OpenAIClient, continuation: ResponseDeltaStream.Continuation) {
    self.client = client
    self.delivery = StreamDelivery(continuation: continuation)
  }

  mutating func run(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws {
    try await client.call.stream(request, deadline: deadline) { try handle($0) }
    if let calls = toolCalls.response(modelVersion: lastModelVersion ?? client.modelName) {
      try delivery.deliver(calls)
    }
    try delivery.finish(sawEndMarker: sawDone)
  }

  private mutating func handle(_ event: SSEEvent) throws {
    let secrets = client.secrets
    let payload = try event.payload(ignoringData: sawDone) { OpenAIErrorMapping.streamError($0, secrets: secrets) }
    let json: Data
    switch payload {
    case .nothing: return
    case .done:
      sawDone = true
      return
    case .json(let data): json = data
    }
    var chunk = try client.decodeCompletion(json)
    toolCalls.take(from: &chunk)
    let delta = chunk.response(fallbackModel: client.modelName)
    lastModelVersion = delta.modelVersion
    // The role-only first chunk (and any other that carries nothing) is not
    // passed on: it would only be an empty snapshot.
    guard delta.usageMetadata != nil || delta.candidates.contains(where: { !$0.isEmpty }) else { return }
    try delivery.deliver(delta)
  }
}
