import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The REST client behind `CloudGeminiModel`: builds each call and turns
/// what comes back into responses or typed errors. The exchange itself
/// (transport, offline rules, size limits, retries) is the shared `RemoteCall`.
struct GeminiClient: Sendable {
  let modelName: String
  let endpoint: GeminiEndpoint
  let call: RemoteCall

  init(shell: RemoteModelShell, endpoint: GeminiEndpoint) {
    self.modelName = shell.name
    self.endpoint = endpoint
    self.call = shell.call { head, body, secrets in
      RemoteErrorMapping.apiError(
        status: head.statusCode, contentType: head.contentType, body: body, secrets: secrets)
    }
  }

  var options: RequestOptions { call.options }
  var reachability: ReachabilityMemory.Reporter? { call.reachability }

  /// `:generateContent`: one complete answer.
  ///
  /// The same rule as a stream (`StreamDelivery.finish`): a body that ended
  /// where its framing says is the whole answer, with or without a finish
  /// reason; one cut short ends before its last chunk or its
  /// `Content-Length` (a transport error, `.connectionLost`), or fails to
  /// parse. Never retried once the server may have read it
  /// (`RetryLoop.isIdempotent`).
  func generateContent(_ body: GenerateContentRequest, log: LogHandler) async throws
    -> GenerateContentResponse
  {
    let request = try endpoint.request(
      .generateContent, body: body, tokens: usesTokens, timeout: options.timeout)
    let loop = call.retryLoop(log: log)
    return try await loop.run { _ in
      let data = try await call.unary(request, deadline: loop.deadline)
      var response = try RemoteCall.decode(GenerateContentResponse.self, from: data)
      if response.modelVersion.isEmpty { response.modelVersion = modelName }
      response.placement = .cloud
      response.producer = endpoint.producer
      try ResponseChecks.checkComplete(response)
      return response
    }
  }

  /// `:countTokens`: how many tokens the contents would take as a prompt.
  func countTokens(_ body: CountTokensRequest, log: LogHandler) async throws -> Int {
    let request = try endpoint.request(
      .countTokens, body: body, tokens: usesTokens, timeout: options.timeout)
    // Counting runs nothing and costs nothing: safe to send again.
    let loop = call.retryLoop(log: log, isIdempotent: true)
    return try await loop.run { _ in
      let data = try await call.unary(request, deadline: loop.deadline)
      return try RemoteCall.decode(CountTokensResponse.self, from: data).totalTokens
    }
  }

  /// Whether the credential is a bearer token (then Vertex AI is told the project).
  var usesTokens: Bool { call.authorizer?.usesTokens ?? false }

  /// The model's secrets, to redact from what the server writes.
  var secrets: (any SecretRedacting)? { call.authorizer }
}
