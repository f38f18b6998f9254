import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Turns an OpenAI-compatible server's error responses into the library's
/// typed `CloudAPIError`s: the same error type, retry rules and redaction
/// as Gemini's, from this protocol's envelope.
///
/// The envelope is `{"error": {"message", "type", "code"}}` (OpenAI,
/// llama-server, Ollama's compatibility layer), where `code` is a string, a
/// number or null; vLLM writes the same fields at the top level
/// (`{"object": "error", "message", "type", "code"}`), and some servers send
/// `{"error": "text"}`. `type` becomes `CloudAPIError.status`, a string
/// `code` the `reason`. The wait before a retry comes from the `Retry-After`
/// header (seconds or an HTTP date), which `RetryLoop` honours as it honours
/// Gemini's `RetryInfo`.
enum OpenAIErrorMapping {
  /// The typed error of a non-2xx response. A JSON envelope gives the
  /// message; a plain-text body gives its first line (bounded); any other
  /// body (an HTML page from a proxy) a short account, never the page.
  static func apiError(head: ResponseHead, body: Data, secrets: (any SecretRedacting)?) -> HybridInferenceError {
    let status = head.statusCode
    let retryDelay = head.retryAfter.flatMap { retryAfter($0) }
    if var error = envelope(in: body, httpStatus: status) {
      error.retryDelay = retryDelay
      return .cloudAPI(RemoteErrorMapping.inert(error, redacting: secrets))
    }
    let kind = RemoteErrorMapping.mediaType(head.contentType)
    var message = RemoteErrorMapping.nonJSONMessage(status: status, mediaType: kind, byteCount: body.count)
    if kind.lowercased() == "text/plain", let line = firstLine(of: body, secrets: secrets) {
      message = line
    }
    return .cloudAPI(
      RemoteErrorMapping.inert(
        CloudAPIError(httpStatus: status, message: message, retryDelay: retryDelay), redacting: secrets))
  }

  /// The error of a mid-stream `{"error": ...}` event, or nil when `json` is
  /// not one. Its status is the number in the body's `code`, else 500.
  static func streamError(_ json: Data, secrets: (any SecretRedacting)?) -> HybridInferenceError? {
    guard let error = envelope(in: json, httpStatus: nil) else { return nil }
    return .cloudAPI(RemoteErrorMapping.inert(error, redacting: secrets))
  }

  /// The error described by `body`, or nil when it is not an error envelope.
  /// - Parameter httpStatus: The response's status; nil in a stream, where
  ///   the body's numeric `code` (else 500) stands in.
  static func envelope(in body: Data, httpStatus: Int?) -> CloudAPIError? {
    guard let json = try? JSONDecoder().decode(JSONValue.self, from: body),
      case .object(let top) = json
    else { return nil }
    let fields: [String: JSONValue]
    switch top["error"] {
    case .object(let inner)?: fields = inner
    case .string(let text)?: fields = ["message": .string(text)]
    default:
      guard top["object"]?.stringValue == "error" || (top["message"] != nil && top["type"] != nil)
      else { return nil }
      fields = top
    }
    var codeNumber: Int?
    var codeText: String?
    switch fields["code"] {
    case .number(let number)? where number.isFinite && abs(number) < 1e6: codeNumber = Int(number)
    case .string(let text)?: codeText = text
    default: break
    }
    return CloudAPIError(
      httpStatus: httpStatus ?? codeNumber.flatMap { (100..<600).contains($0) ? $0 : nil } ?? 500,
      status: fields["type"]?.stringValue, message: fields["message"]?.stringValue ?? "",
      reason: codeText)
  }

  /// `Retry-After` as a wait: delta-seconds, or an HTTP date (RFC 9110);
  /// nil when it is neither, negative or lies in the past. A wait past
  /// `WaitLimits.longestWait` is that long: the server asked for more than
  /// any request waits.
  static func retryAfter(_ value: String, now: Date = Date()) -> Duration? {
    let text = value.trimmingCharacters(in: .whitespaces)
    if let seconds = Double(text) { return WaitLimits.seconds(seconds) }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: text) else { return nil }
    let seconds = date.timeIntervalSince(now)
    return seconds > 0 ? WaitLimits.seconds(seconds) : nil
  }

  /// The first non-empty line of a text body, at most 200 characters, with
  /// the key redacted before anything is cut: a cut through the key would
  /// leave part of it unrecognised. (The body is bounded by
  /// `RequestOptions.maximumResponseBytes`.)
  private static func firstLine(of body: Data, secrets: (any SecretRedacting)?) -> String? {
    let whole = String(decoding: body, as: UTF8.self)
    let text = secrets.map { $0.redact(whole) } ?? whole
    var rest = text[...]
    while !rest.isEmpty {
      let end = rest.firstIndex(where: \.isNewline) ?? rest.endIndex
      let line = rest[..<end].trimmingCharacters(in: .whitespaces)
      if !line.isEmpty { return line.count > 200 ? String(line.prefix(200)) + "…" : line }
      rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
    }
    return nil
  }
}
