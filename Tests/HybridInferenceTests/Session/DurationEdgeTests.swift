import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceRemote

/// Every `Duration` the public API takes, at the edges of `Duration` and
/// `Int64`: each ends in an answer or a typed error, clamped into
/// `0...WaitLimits.longestWait`, and the process lives. Each runs in a child
/// process, since such values once trapped in `Task.sleep` and in clock and
/// backoff arithmetic. (No public API takes a `TimeInterval`.)
final class DurationEdgeTests: XCTestCase {
  /// The extremes, named for the failure message.
  static let extremes: [(name: String, value: Duration)] = [
    (".seconds(Int64.max)", .seconds(Int64.max)),
    (".seconds(Int64.min)", .seconds(Int64.min)),
    ("components (.max, .max)", Duration(secondsComponent: .max, attosecondsComponent: .max)),
    ("components (.min, .min)", Duration(secondsComponent: .min, attosecondsComponent: .min)),
    ("attoseconds Int128.max", Duration(attoseconds: .max)),
    ("attoseconds Int128.min", Duration(attoseconds: .min)),
    (".nanoseconds(Int64.max)", .nanoseconds(Int64.max)),
    (".nanoseconds(Int64.min)", .nanoseconds(Int64.min)),
    (".milliseconds(Int.max)", .milliseconds(Int.max)),
    ("a year and a second", WaitLimits.longestWait + .seconds(1)),
    ("-1 ns", .nanoseconds(-1)),
    (".zero", .zero),
  ]

  /// Whether a value clamps to `longestWait` (rather than to zero).
  private static func isHuge(_ value: Duration) -> Bool { value > WaitLimits.longestWait }

  func testTheClamp_keepsEveryExtremeInsideTheRange() {
    let now = ContinuousClock.now
    for (name, value) in Self.extremes {
      let clamped = WaitLimits.clamped(value)
      XCTAssertEqual(clamped, value > .zero ? min(value, WaitLimits.longestWait) : .zero, name)
      XCTAssertEqual(now.advanced(byWait: value), now.advanced(by: clamped), name)
    }
    XCTAssertEqual(WaitLimits.seconds(.infinity), WaitLimits.longestWait)
    XCTAssertEqual(WaitLimits.seconds(.greatestFiniteMagnitude), WaitLimits.longestWait)
    XCTAssertNil(WaitLimits.seconds(.nan))
    XCTAssertNil(WaitLimits.seconds(-.infinity))
    XCTAssertNil(WaitLimits.seconds(-1))
    XCTAssertEqual(WaitLimits.seconds(.leastNonzeroMagnitude), .milliseconds(1), "never shorter than asked")
    XCTAssertEqual(WaitLimits.seconds(0), .zero)
  }

  func testHedgeAfterAtItsExtremes_answers() async throws {
    try await ChildProcess.assertPasses(self) {
      for (name, value) in Self.extremes {
        for streamed in [false, true] {
          // The primary is a little slow, so the hedge's timer is running when it answers.
          let primary = ScriptedModel(
            "primary", placement: .onDevice, script: [.delayedAnswer(.milliseconds(30), ["from primary"])])
          let secondary = ScriptedModel("secondary", placement: .cloud, script: [.answer(["from secondary"])])
          let session = GenerativeModelSession(
            model: .hybridModel(primary: primary, secondary: secondary, hedgeAfter: value), logHandler: .silent)
          let response =
            streamed ? try await session.streamResponse(to: "Hi").collect() : try await session.respond(to: "Hi")
          // Zero or less asks both at once (the secondary, instant, wins);
          // a year or more never hedges within the primary's answer.
          let expected = Self.isHuge(value) ? "from primary" : "from secondary"
          XCTAssertEqual(response.content, expected, "\(name), streamed: \(streamed)")
        }
      }
    }
  }

  func testRetryPolicyDelaysAtTheirExtremes_stayInsideTheRange() async throws {
    try await ChildProcess.assertPasses(self) {
      let small = Duration.milliseconds(1)
      for (name, value) in Self.extremes {
        let policies = [
          RetryPolicy(maxAttempts: 40, baseDelay: value, maxDelay: small),
          RetryPolicy(maxAttempts: 40, baseDelay: small, maxDelay: value),
          RetryPolicy(maxAttempts: 40, baseDelay: value, maxDelay: value),
        ]
        for policy in policies {
          for retry in [1, 2, 6, 31, 40, Int.max] {
            for minimum in [nil, value] {
              let wait = policy.delay(beforeRetry: retry, fraction: 1, serverMinimum: minimum)
              XCTAssertTrue((Duration.zero...WaitLimits.longestWait).contains(wait), "\(name): \(wait)")
            }
          }
        }
      }
    }
  }

  func testRequestOptionsDurationsAtTheirExtremes_endInAnAnswerOrATypedError() async throws {
    try await ChildProcess.assertPasses(self) {
      let retried = Locked(0)
      let server = try ScriptedHTTPServer { _, _, head in
        // A retry-policy request (its model named "retried") fails with a 503 every time.
        if head.contains("/retried:") {
          retried.withLock { $0 += 1 }
          return .send(ScriptedAPIReplies.gemini503)
        }
        return .send(ScriptedAPIReplies.geminiAnswer("ok", for: head))
      }
      defer { server.stop() }
      let baseURL = try server.url("")
      func ask(_ options: RequestOptions, model: String = "m", streamed: Bool) async -> Result<String, any Error> {
        let session = GenerativeModelSession(
          model: CloudGeminiModel(
            name: model, apiKey: "k", baseURL: baseURL, requestOptions: options, logHandler: .silent),
          logHandler: .silent)
        return await Result {
          try await (streamed ? session.streamResponse(to: "Hi").collect() : session.respond(to: "Hi")).content
        }
      }
      for transport in [RequestOptions.Transport.automatic, .urlSession] {
        for (name, value) in Self.extremes {
          let label = "\(name), \(transport)"
          for streamed in [false, true] {
            var options = RequestOptions(
              timeout: value, retryPolicy: .none, remembersOffline: false, transport: transport)
            // A limit of zero or less is refused before the request goes out.
            switch await ask(options, streamed: streamed) {
            case .success(let text): XCTAssertTrue(value > .zero && text == "ok", "\(label): \(text)")
            case .failure(let error):
              XCTAssertTrue(value <= .zero && isInvalidOptions(error), "\(label): \(error)")
            }
            options = RequestOptions(
              timeout: .seconds(20), connectTimeout: value, retryPolicy: .none, remembersOffline: false,
              transport: transport)
            // So is a connect limit of zero or less.
            switch await ask(options, streamed: streamed) {
            case .success(let text): XCTAssertTrue(value > .zero && text == "ok", "\(label): \(text)")
            case .failure(let error):
              XCTAssertTrue(value <= .zero && isInvalidOptions(error), "\(label): \(error)")
            }
          }
          // The backoff: every wait is clamped, and waits that fit the
          // timeout are waited; the 503 comes back after the last attempt.
          for policy in [
            RetryPolicy(maxAttempts: 8, baseDelay: value, maxDelay: .milliseconds(1)),
            RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: value),
          ] {
            retried.withLock { $0 = 0 }
            let options = RequestOptions(
              timeout: .seconds(20), retryPolicy: policy, remembersOffline: false, transport: transport)
            let result = await ask(options, model: "retried", streamed: false)
            guard case .failure(HybridInferenceError.cloudAPI(let error)) = result, error.httpStatus == 503 else {
              XCTFail("\(label): \(result)")
              continue
            }
            XCTAssertEqual(retried.withLock { $0 }, policy.maxAttempts, label)
          }
        }
      }
    }
  }
}
