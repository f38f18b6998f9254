import Foundation

/// Whole HTTP/1.1 responses of the two cloud APIs, for a `ScriptedHTTPServer`
/// that plays a Gemini, OpenAI-compatible or metadata server in a test.
enum ScriptedAPIReplies {
  /// A response with `body`, its length, and `headers` (whole lines, no CRLF).
  static func response(
    status: Int, contentType: String = "application/json", headers: [String] = [], _ body: String
  ) -> String {
    let head = ["HTTP/1.1 \(status) Scripted", "Content-Type: \(contentType)", "Content-Length: \(body.utf8.count)"]
    return (head + headers).joined(separator: "\r\n") + "\r\n\r\n" + body
  }

  /// Gemini's answer of one text part, whole (`generateContent`) or as one
  /// server-sent event (`streamGenerateContent?alt=sse`), as `head` asks.
  static func geminiAnswer(_ text: String, for head: String) -> String {
    let answer = #"{"candidates":[{"content":{"role":"model","parts":[{"text":"\#(text)"}]},"finishReason":"STOP"}]}"#
    return head.contains(":streamGenerateContent")
      ? response(status: 200, contentType: "text/event-stream", "data: \(answer)\r\n\r\n")
      : response(status: 200, answer)
  }

  /// Gemini's 429 with `retryDelay` as its `RetryInfo`, written as given.
  static func gemini429(retryDelay: String) -> String {
    response(
      status: 429,
      #"{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":["#
        + #"{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"\#(retryDelay)"}]}}"#)
  }

  /// Gemini's 503, which the retry policy retries.
  static let gemini503 = response(
    status: 503, #"{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#)

  /// An OpenAI-compatible chat completion of `text`.
  static func openAIAnswer(_ text: String) -> String {
    response(
      status: 200,
      #"{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"#
        + #""message":{"role":"assistant","content":"\#(text)"},"finish_reason":"stop"}]}"#)
  }

  /// An OpenAI-compatible 429 with `Retry-After: retryAfter`.
  static func openAI429(retryAfter: String) -> String {
    response(
      status: 429, headers: ["Retry-After: \(retryAfter)"],
      #"{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}"#)
  }

  /// The metadata server's token with `expires_in` written as given.
  static func metadataToken(expiresIn: String) -> String {
    response(status: 200, #"{"access_token":"ya29.scripted","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
  }
}
