import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The client behind `OpenAICompatibleModel`: builds each call and turns
/// what comes back into responses or typed errors. The exchange itself
/// (transport, offline rules, size limits, retries) is the shared `RemoteCall`,
/// the one the Gemini client uses.
struct OpenAIClient: Sendable {
  let modelName: String
  let endpoint: OpenAIEndpoint
  let call: RemoteCall

  init(shell: RemoteModelShell, endpoint: OpenAIEndpoint) {
    let secrets = shell.authorizer
    self.modelName = shell.name
    self.endpoint = endpoint
    self.call = shell.call(reachability: shell.reachability) { head, body in
      OpenAIErrorMapping.apiError(head: head, body: body, secrets: secrets)
    }
  }

  /// The model's secrets, to redact from what the server writes.
  var secrets: (any SecretRedacting)? { call.authorizer }

  /// Whether requests carry a key or token (then only over TLS or to this machine).
  var credentialed: Bool { call.authorizer != nil }

  /// `POST /chat/completions`: one complete answer.
  func chatCompletion(_ body: ChatCompletionRequest, log: LogHandler) async throws
    -> GenerateContentResponse
  {
    let request = try endpoint.request(
      "chat/completions", body: body, credentialed: credentialed, streaming: false, timeout: call.options.timeout)
    let loop = call.retryLoop(log: log)
    return try await loop.run { _ in
      let data = try await call.unary(request, deadline: loop.deadline)
      let completion = try decodeCompletion(data)
      let response = completion.response(fallbackModel: modelName)
      try ResponseChecks.checkComplete(response)
      return response
    }
  }

  /// A completion or chunk; an `{"error": ...}` body sent with a 2xx status
  /// (as some servers do, mid-stream above all) is its typed error.
  func decodeCompletion(_ data: Data) throws -> ChatCompletionResponse {
    let completion: ChatCompletionResponse
    do {
      completion = try RemoteCall.decode(ChatCompletionResponse.self, from: data)
    } catch {
      throw OpenAIErrorMapping.streamError(data, secrets: secrets) ?? error
    }
    if completion.choices.isEmpty, completion.usage == nil,
      let error = OpenAIErrorMapping.streamError(data, secrets: secrets)
    {
      throw error
    }
    return completion
  }

  /// `GET /models`: the ids of the models the server serves.
  func models(log: LogHandler) async throws -> [String] {
    let request = try endpoint.request(
      "models", body: String?.none, credentialed: credentialed, streaming: false, timeout: call.options.timeout)
    let loop = call.retryLoop(log: log, isIdempotent: true)
    return try await loop.run { _ in
      let data = try await call.unary(request, deadline: loop.deadline)
      return try RemoteCall.decode(ModelList.self, from: data).data.map(\.id)
    }
  }

  /// The body of `GET /models`: `{"data": [{"id": ...}, ...]}`.
  struct ModelList: Decodable {
    var data: [Entry]
    struct Entry: Decodable { var id: String }
  }
}
