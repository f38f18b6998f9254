import Foundation
import HybridInference
import Synchronization
import XCTest

@testable import HybridInferenceCore

/// A bearer-token provider that never returns: it counts its calls and the
/// calls that were cancelled; with `ignoresCancellation` it goes on
/// waiting even then, as a stuck provider would, until `release`.
final class HangingProvider: Sendable {
  private let counts = Mutex((calls: 0, cancelled: 0))
  private let stuck = Mutex<[CheckedContinuation<Void, Never>]>([])
  private let ignoresCancellation: Bool

  init(ignoresCancellation: Bool = false) {
    self.ignoresCancellation = ignoresCancellation
  }

  var calls: Int { counts.withLock { $0.calls } }
  var cancelled: Int { counts.withLock { $0.cancelled } }

  /// Lets the stuck calls return, so that no task outlives the test.
  func release() {
    let continuations = stuck.withLock { stuck in
      defer { stuck = [] }
      return stuck
    }
    for continuation in continuations { continuation.resume() }
  }

  var credential: Credential {
    .bearerToken { [self] in
      counts.withLock { $0.calls += 1 }
      if ignoresCancellation {
        await withCheckedContinuation { continuation in stuck.withLock { $0.append(continuation) } }
      } else {
        do {
          try await Task.sleep(for: .seconds(3600))
        } catch {
          counts.withLock { $0.cancelled += 1 }
          throw error
        }
      }
      return "ya29.valid-too-late"
    }
  }
}

/// The request's deadline covers getting its credential: a provider that
/// never returns ends the request with `.timedOut` at the deadline, on both
/// backends, unary and streamed, nothing is sent, the provider's call is
/// cancelled, and the next request asks the provider again.
final class CloudCredentialDeadlineTests: CloudTestCase {
  private static let timeout = Duration.seconds(1)
  private static let request = ModelRequest(transcript: Transcript(entries: [.prompt("hi")]))

  private var options: RequestOptions {
    var options = testOptions
    options.timeout = Self.timeout
    return options
  }

  /// Runs the unary call and the streamed one; each must end with
  /// `.timedOut` at the deadline (a generous margin), not wait for good.
  private func assertBothCallsTimeOut(
    unary: @escaping @Sendable () async throws -> String, streamed: @escaping @Sendable () async throws -> Int,
    file: StaticString = #filePath, line: UInt = #line
  ) async {
    let calls: [(String, @Sendable () async throws -> Void)] = [
      ("unary", { _ = try await unary() }), ("streamed", { _ = try await streamed() }),
    ]
    for (what, call) in calls {
      let outcome = await guardedRun(.seconds(15), call)
      XCTAssertFalse(
        outcome.guardFired, "\(what): the request waited for the provider for good", file: file, line: line)
      XCTAssertTrue(
        isTimedOut(outcome.error), "\(what): expected timedOut, got \(outcome.result)", file: file, line: line)
      XCTAssertLessThan(outcome.elapsed, Self.timeout * 2 + .seconds(1), "\(what): late", file: file, line: line)
    }
  }

  func testGemini_aProviderThatNeverReturns_timesOutAtTheDeadline_andIsCancelled() async throws {
    let name = "echo~\(uniqueID())"
    let provider = HangingProvider()
    let model = CloudGeminiModel(
      name: name, apiKey: nil, baseURL: server.baseURL, authorization: provider.credential, requestOptions: options,
      logHandler: .silent)
    await assertBothCallsTimeOut(
      unary: { try await model.respond(to: Self.request).text },
      streamed: { try await drainedTextBytes(model.streamResponse(to: Self.request)) })
    // Each request asked the provider afresh: the first one's hung call
    // was given up (cancelled), not joined by the next.
    XCTAssertEqual(provider.calls, 2)
    try await waitUntil(timeout: .seconds(5)) { provider.cancelled == 2 }
    let sent = try await server.requestCount(name)
    XCTAssertEqual(sent, 0, "nothing is sent without a token")
  }

  func testGemini_aProviderThatIgnoresCancellation_stillTimesOutAtTheDeadline() async throws {
    let provider = HangingProvider(ignoresCancellation: true)
    defer { provider.release() }
    let model = CloudGeminiModel(
      name: "echo~\(uniqueID())", apiKey: nil, baseURL: server.baseURL, authorization: provider.credential,
      requestOptions: options, logHandler: .silent)
    await assertBothCallsTimeOut(
      unary: { try await model.respond(to: Self.request).text },
      streamed: { try await drainedTextBytes(model.streamResponse(to: Self.request)) })
    XCTAssertEqual(provider.calls, 2, "the stuck call was left behind, not joined by the next request")
  }

  func testOpenAI_aProviderThatNeverReturns_timesOutAtTheDeadline_andIsCancelled() async throws {
    let stub = try OpenAITestServers.stub(apiKey: "sk-test-0123456789")
    defer { stub.stop() }
    let provider = HangingProvider()
    let model = OpenAICompatibleModel(
      name: "echo", baseURL: stub.openAIBaseURL, apiKey: nil, authorization: provider.credential,
      requestOptions: options, logHandler: .silent)
    await assertBothCallsTimeOut(
      unary: { try await model.respond(to: Self.request).text },
      streamed: { try await drainedTextBytes(model.streamResponse(to: Self.request)) })
    XCTAssertEqual(provider.calls, 2)
    try await waitUntil(timeout: .seconds(5)) { provider.cancelled == 2 }
    let sent = try await OpenAITestServers.requestCount(stub, model: "echo")
    XCTAssertEqual(sent, 0, "nothing is sent without a token")
  }
}
