import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Every duration a server gives, at its extremes: Gemini's
/// `RetryInfo.retryDelay`, `Retry-After` (seconds or an HTTP date), the
/// metadata server's `expires_in`. Each is clamped silently into
/// `0...WaitLimits.longestWait` (a negative or unreadable one is no wait),
/// and the request ends in an answer or a typed error. In a child process,
/// as every hostile-input case is.
final class ServerDurationEdgeTests: XCTestCase {
  /// Retries that would fit any server delay shorter than the call's timeout.
  private static let options = RequestOptions(
    timeout: .seconds(20),
    retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .milliseconds(1)),
    remembersOffline: false)

  /// A scripted server whose first request gets `first`, and every later
  /// one `then(head)`; it counts the requests.
  private static func server(
    first: String, then: @escaping @Sendable (String) -> String
  ) throws -> (ScriptedHTTPServer, Locked<Int>) {
    let count = Locked(0)
    let server = try ScriptedHTTPServer { _, _, head in
      let number = count.withLock { count in
        count += 1
        return count
      }
      return .send(number == 1 ? first : then(head))
    }
    return (server, count)
  }

  /// Checks a 429's outcome: a delay past what any call waits is not retried
  /// and is reported clamped; any other (none, negative, garbage, short) is
  /// retried, and the retry answers.
  private func check(
    _ result: Result<String, any Error>, requests: Int, expected: Duration?, _ label: String
  ) {
    if let expected, expected > Self.options.timeout {
      guard case .failure(HybridInferenceError.cloudAPI(let error)) = result else {
        return XCTFail("\(label): expected the 429, got \(result)")
      }
      XCTAssertEqual(error.retryDelay, expected, label)
      XCTAssertEqual(requests, 1, "\(label): a wait past the timeout is not waited")
    } else {
      guard case .success(let text) = result else { return XCTFail("\(label): \(result)") }
      XCTAssertEqual(text, "ok", label)
      XCTAssertEqual(requests, 2, label)
    }
  }

  func testGeminiRetryInfoAtTheExtremes_isClampedNotTrustedOrDropped() async throws {
    try await ChildProcess.assertPasses(self) {
      let longest = WaitLimits.longestWait
      let cases: [(String, Duration?)] = [
        ("1e300s", longest), ("9223372036854775807s", longest), ("99999999999999999999s", longest),
        ("31536001s", longest), ("infs", longest), ("9e15s", longest), ("-1s", nil), ("-1e300s", nil),
        ("nans", nil), ("0s", .zero), ("1e-300s", .milliseconds(1)), ("soon", nil), ("0.01s", .milliseconds(10)),
      ]
      for (value, expected) in cases {
        let (server, count) = try Self.server(first: ScriptedAPIReplies.gemini429(retryDelay: value)) {
          ScriptedAPIReplies.geminiAnswer("ok", for: $0)
        }
        defer { server.stop() }
        let model = CloudGeminiModel(
          name: "m", apiKey: "k", baseURL: try server.url(""), requestOptions: Self.options, logHandler: .silent)
        let result = await Result {
          try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi").content
        }
        check(result, requests: count.withLock { $0 }, expected: expected, "retryDelay \(value)")
      }
    }
  }

  func testRetryAfterAtTheExtremes_isClampedNotTrustedOrDropped() async throws {
    try await ChildProcess.assertPasses(self) {
      let longest = WaitLimits.longestWait
      let cases: [(String, Duration?)] = [
        ("1e300", longest), ("99999999999999999999", longest), ("inf", longest), ("31536001", longest),
        ("Fri, 31 Dec 9999 23:59:59 GMT", longest), ("-5", nil), ("-1e300", nil), ("nan", nil), ("soon", nil),
        ("", nil), ("Thu, 01 Jan 1970 00:00:00 GMT", nil), ("0", .zero), ("0.01", .milliseconds(10)),
      ]
      for (value, expected) in cases {
        let (server, count) = try Self.server(first: ScriptedAPIReplies.openAI429(retryAfter: value)) { _ in
          ScriptedAPIReplies.openAIAnswer("ok")
        }
        defer { server.stop() }
        let model = OpenAICompatibleModel(
          name: "m", baseURL: try server.url("/v1"), apiKey: nil, requestOptions: Self.options, logHandler: .silent)
        let result = await Result {
          try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "Hi").content
        }
        check(result, requests: count.withLock { $0 }, expected: expected, "Retry-After \(value)")
      }
    }
  }

  func testMetadataExpiresInAtTheExtremes_isClampedToADay() async throws {
    try await ChildProcess.assertPasses(self) {
      // (expires_in, whether a token is kept for the second request).
      let cases: [(String, Bool)] = [
        ("1e300", true), ("99999999999999999999", true), ("9223372036854775807", true), ("3600.5", true),
        ("-9223372036854775808", false), ("-1e300", false), ("-1", false), ("0", false), ("1e-300", false),
      ]
      for (value, kept) in cases {
        let fetches = Locked(0)
        let server = try ScriptedHTTPServer { _, _, head in
          if head.contains("/computeMetadata/") {
            fetches.withLock { $0 += 1 }
            return .send(ScriptedAPIReplies.metadataToken(expiresIn: value))
          }
          return .send(ScriptedAPIReplies.geminiAnswer("ok", for: head))
        }
        defer { server.stop() }
        let model = CloudGeminiModel(
          name: "m", baseURL: try server.url(""), authorization: .metadataServer, requestOptions: Self.options,
          logHandler: .silent, environment: ["GCE_METADATA_HOST": "127.0.0.1:\(server.port)"])
        let session = GenerativeModelSession(model: model, logHandler: .silent)
        for _ in 0..<2 {
          let result = await Result { try await session.respond(to: "Hi").content }
          XCTAssertEqual(try? result.get(), "ok", "expires_in \(value): \(result)")
        }
        XCTAssertEqual(fetches.withLock { $0 }, kept ? 1 : 2, "expires_in \(value)")
      }
    }
  }
}
