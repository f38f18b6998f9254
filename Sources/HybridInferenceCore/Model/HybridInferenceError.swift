import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Every failure the library reports, in a form an app can switch on.
///
/// Cancellation is not a case: a cancelled request throws Swift's own
/// `CancellationError`, which is what structured-concurrency code already
/// handles. No description ever contains an API key.
///
/// More cases come with new releases. The type stays an enum, since apps
/// bind the values its cases carry in `catch` patterns, and is marked
/// `@nonexhaustive` (SE-0487) where the compiler knows the attribute: an app's
/// `switch` over it must end with `@unknown default` (or `default`), so a new
/// case reaches that branch rather than breaking the app's build. Compilers
/// that predate the attribute (Swift 6.2) build the library without it.
#if hasAttribute(nonexhaustive)
  @nonexhaustive
#endif
public enum HybridInferenceError: Error, Sendable {
  /// The model cannot answer now (see the reason).
  case unavailable(model: String, reason: UnavailableReason)
  /// The model cannot serve this kind of request (say, content it does not take).
  case unsupportedRequest(String)
  /// The conversation, the prompt and room for the answer need more tokens than
  /// the context window holds. Nothing was decoded.
  case contextWindowExceeded(contextSize: Int, tokenCount: Int)
  /// The cloud could not be reached: no route, DNS failure, connection
  /// refused, reset before the request was written, a connect timeout, or a
  /// failed TLS handshake. Nothing reached the server. Never an HTTP status,
  /// never a server that was reached and then went quiet.
  case offline(URLError)
  /// The request was sent but the exchange did not end within
  /// `RequestOptions.timeout` (the limit is attached): the server was reached
  /// and is slow, so this is not `offline` and a prefer-cloud hybrid throws it.
  /// Also a bearer token that did not come within that time (nothing sent):
  /// a hung credential is not being offline either.
  case timedOut(Duration)
  /// The connection was made and the request sent, then the connection was
  /// reset or closed before the response was complete. The server was
  /// reached, so this is not `offline`; the server may have run the request,
  /// so a generation is not retried (`countTokens` and `GET /models` are).
  case connectionLost(URLError)
  /// The server redirected to another origin (scheme, host and port; both are
  /// attached, without paths or credentials). The redirect was refused, so
  /// neither the API key nor the prompt went there.
  case redirectRefused(from: String, to: String)
  /// The base URL is plain `http://` to a host other than this machine (the
  /// URL is attached, without credentials): the API key would cross the
  /// network unencrypted, so nothing was sent. Use `https://`, or a loopback
  /// proxy.
  case insecureBaseURL(String)
  /// The cloud answered with an error status.
  case cloudAPI(CloudAPIError)
  /// The model's credential could not give a token (`Credential.bearerToken`
  /// or `.metadataServer`): `credential` names it ("bearer token provider",
  /// "metadata server"), `error` is what its provider threw or what went
  /// wrong fetching it (off Google Cloud, the metadata server is not there).
  /// Nothing was sent to the model's server; not offline, not retried.
  case authorizationFailed(credential: String, error: any Error)
  /// The prompt was blocked; the raw response carries the feedback.
  case promptBlocked(reason: PromptFeedback.BlockReason?, response: GenerateContentResponse)
  /// The answer was withheld or cut for a policy reason (SAFETY, RECITATION, ...).
  case responseStopped(reason: FinishReason, response: GenerateContentResponse)
  /// An OpenAI-compatible stream whose body ended with neither
  /// `data: [DONE]` nor a finish reason (a proxy or load balancer closed it
  /// early at an event boundary). `response` holds what arrived. The server
  /// was reached and ran the request, so this is not `offline` and is not
  /// retried. (Gemini streams have no end marker: a body that ended
  /// properly is a whole answer, one cut short `.connectionLost`.)
  case responseTruncated(response: GenerateContentResponse)
  /// The server's reply could not be understood.
  case malformedResponse(String)
  /// A response body, a single stream event or a whole streamed answer was
  /// longer than its limit (`RequestOptions.maximumResponseBytes`,
  /// `maximumEventBytes` or `maximumStreamedResponseBytes`, attached, in
  /// bytes). Reading stopped there and the connection was closed, so memory
  /// stays bounded; not retried.
  case responseTooLarge(limit: Int)
  /// The model file is not a usable GGUF file.
  case invalidModelFile(path: String, reason: String)
  /// The on-device model failed while loading or generating.
  case generationFailed(String)
  /// A schema, or a type's schema, that cannot be described or served here:
  /// `path` names the field (`ingredients[].unit`, `$.properties.when`), so
  /// the fix is obvious. Thrown before anything is sent or decoded.
  case unsupportedSchema(path: String, reason: String)
  /// A structured answer that is not JSON, or does not decode into the type
  /// or satisfy the schema (a number outside its range, a missing field). On
  /// device a hybrid falls back on it, as on any other on-device failure.
  case invalidStructuredOutput(String)
  /// An option is out of range; nothing was sent.
  case invalidOptions(String)
  /// The prompt is empty; nothing was sent.
  case emptyPrompt
  /// A transcript no session could have written, built in code and given to
  /// `GenerativeModelSession(model:transcript:...)`: a tool output with no
  /// call before it, a call in a user turn, an output in a model turn (the
  /// reason names the entry). Thrown by the first request, before anything
  /// is sent. A decoded transcript is checked the same way by its decoder,
  /// which throws `DecodingError` instead.
  case invalidTranscript(String)
  /// An attachment of the prompt cannot be right (a malformed MIME type, an
  /// image without an image type, no bytes, a URI without a scheme); the
  /// reason names it. Nothing was sent.
  case invalidAttachment(String)
  /// The request's inline media take `bytes` bytes base64-encoded, more than
  /// the backend's `limit` (`RequestOptions.maximumInlineMediaBytes`);
  /// nothing was sent. Send large files by URI (`Attachment.file`).
  case requestTooLarge(bytes: Int, limit: Int)
  /// The session is already answering; it takes one request at a time.
  case concurrentRequests
  /// A hybrid tried both models and both failed.
  case bothModelsFailed(primary: any Error, secondary: any Error)
  /// A tool threw: `name` is the tool, `error` what it threw. The request
  /// ends there and never falls back, since the tool may have had effects.
  case toolFailed(name: String, error: any Error)
  /// The model called a tool that does not exist, or with arguments that do
  /// not satisfy its schema or decode into its `Arguments`, a second time in
  /// one request (the first time, the problem goes back to the model as the
  /// call's output so that it can correct itself).
  case invalidToolCall(name: String, reason: String)
  /// The model kept calling tools for more rounds than
  /// `HybridGenerationOptions.maximumToolRounds` (attached) allows.
  case tooManyToolRounds(limit: Int)
  /// One answer asked for `count` tool calls, more than
  /// `HybridGenerationOptions.maximumToolCallsPerRound` (`limit`) allows;
  /// thrown before any of them runs.
  case tooManyToolCalls(count: Int, limit: Int)
  /// A model file could not be downloaded from `url` (its origin and path,
  /// never its query): `status` is the HTTP status that refused it, nil
  /// when the transfer itself failed (the reason says how: the connection
  /// dropped, the server sent other bytes than it announced). A partial
  /// file is kept, and the next `download()` resumes it.
  case downloadFailed(url: String, status: Int?, reason: String)
  /// The downloaded bytes do not have the SHA-256 they must have (pinned
  /// in the `ModelSource`, or announced by the hub); both in lowercase
  /// hexadecimal. Nothing is left in the store that looks ready.
  case checksumMismatch(expected: String, actual: String)
  /// The file needs `needed` more bytes than the disk has (`available`);
  /// found before the download started, or when a write failed for lack of
  /// room. The partial file keeps what was written.
  case insufficientDiskSpace(needed: Int64, available: Int64)
  /// A `ModelSource` that cannot name a file safely (a repository or file
  /// name with `..`, an empty part, a URL that is not https); refused before
  /// any request, nothing written.
  case invalidModelSource(String)
}

extension HybridInferenceError: CustomStringConvertible, LocalizedError {
  /// The error as one line of text, safe to log: no API key, no full URL,
  /// and what a server or model wrote bounded and inert (control characters
  /// escaped, `ServerText`).
  public var description: String { ServerText.inert(unboundedDescription, limit: 4 * ServerText.maximumBytes) }

  private var unboundedDescription: String {
    switch self {
    case .unavailable(let model, let reason):
      "\(model) is unavailable: \(reason)"
    case .unsupportedRequest(let why):
      "unsupported request: \(why)"
    case .contextWindowExceeded(let contextSize, let tokenCount):
      "the request needs \(tokenCount) tokens but the context window holds \(contextSize)"
    case .offline(let error):
      "offline: \(Self.describe(error))"
    case .timedOut(let limit):
      "the response did not complete within \(limit)"
    case .connectionLost(let error):
      "the connection was lost after the request was sent: \(Self.describe(error))"
    case .redirectRefused(let from, let to):
      "refused a redirect from \(from) to another origin, \(to); the API key and the prompt stay with \(from)"
    case .insecureBaseURL(let url):
      "refusing to send the API key over plain http:// to \(url), which is not this machine; use https://"
    case .cloudAPI(let error):
      error.description
    case .authorizationFailed(let credential, let error):
      "the \(credential) gave no token: \(Self.describe(error))"
    case .promptBlocked(let reason, let response):
      "the prompt was blocked (\(reason?.rawValue ?? "no reason given")"
        + (response.promptFeedback?.blockReasonMessage.map { ": \($0)" } ?? "") + ")"
    case .responseStopped(let reason, _):
      "the response was stopped (\(reason.rawValue))"
    case .responseTruncated:
      "the response stream ended before the answer was complete (no end marker, no finish reason)"
    case .malformedResponse(let why):
      "malformed response: \(why)"
    case .responseTooLarge(let limit):
      "the response exceeded the limit of \(limit) bytes"
    case .invalidModelFile(let path, let reason):
      "invalid model file \(path): \(reason)"
    case .generationFailed(let why):
      "on-device generation failed: \(why)"
    case .invalidOptions(let why):
      "invalid options: \(why)"
    case .unsupportedSchema(let path, let reason):
      "unsupported schema at \(path): \(reason)"
    case .invalidStructuredOutput(let why):
      "the structured answer is invalid: \(why)"
    case .emptyPrompt:
      "the prompt is empty"
    case .invalidTranscript(let why):
      "invalid transcript: \(why)"
    case .invalidAttachment(let why):
      "invalid attachment: \(why)"
    case .requestTooLarge(let bytes, let limit):
      "the request's inline media take \(bytes) bytes base64-encoded, over the limit of \(limit); "
        + "nothing was sent (send large files by URI)"
    case .concurrentRequests:
      "the session is already responding; send one request at a time"
    case .bothModelsFailed(let primary, let secondary):
      "both models failed; primary: \(Self.describe(primary)); secondary: \(Self.describe(secondary))"
    case .toolFailed(let name, let error):
      "the tool \(name) failed: \(Self.describe(error))"
    case .invalidToolCall(let name, let reason):
      "the model's call of \(name) is invalid: \(reason)"
    case .tooManyToolRounds(let limit):
      "the model was still calling tools after \(limit) rounds"
    case .tooManyToolCalls(let count, let limit):
      "the model asked for \(count) tool calls in one answer; at most \(limit) are allowed, none ran"
    case .downloadFailed(let url, let status, let reason):
      "the download from \(url) failed\(status.map { " (HTTP \($0))" } ?? ""): \(reason)"
    case .checksumMismatch(let expected, let actual):
      "the downloaded file's SHA-256 is \(actual), not \(expected); it was removed"
    case .insufficientDiskSpace(let needed, let available):
      "the download needs \(needed) bytes of disk space; \(available) are free"
    case .invalidModelSource(let why):
      "invalid model source: \(why)"
    }
  }

  /// The same as `description`, for `localizedDescription`.
  public var errorDescription: String? { description }

  /// A URLError's code and failing host, never its full URL or user info,
  /// which could carry credentials.
  package static func describe(_ error: any Error) -> String {
    if let urlError = error as? URLError {
      let host = urlError.failingURL?.host.map { " (\($0))" } ?? ""
      return "URLError \(urlError.code.rawValue)\(host)"
    }
    return String(describing: error)
  }
}
