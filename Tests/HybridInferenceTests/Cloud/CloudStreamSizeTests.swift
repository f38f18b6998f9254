import Foundation
import HybridInference
import XCTest

@testable import HybridInferenceCore

/// A streamed answer has a size in all (`maximumStreamedResponseBytes`), not
/// only per event: a server that streams valid events without end, fast or
/// slow, ends the stream with `.responseTooLarge` at the limit, closes its
/// connection and costs the process about the limit in memory, not what the
/// server could send until the deadline. And the deadline still fires while
/// events pour in.
class CloudStreamSizeTests: CloudTestCase {
  /// How the flood is sent and what the stream's limit is: a fast flood of
  /// large events, a steady stream, a slow trickle.
  private static let floods: [(behaviour: String, limit: Int)] = [
    ("rate-0~size-16384~cap-\(192 << 20)", 2 << 20),
    ("rate-400~size-1024", 128 << 10),
    ("rate-20~size-256", 2 << 10),
  ]

  private func options(limit: Int = RequestOptions.defaultMaximumStreamedResponseBytes, timeout: Duration)
    -> RequestOptions
  {
    var options = testOptions
    options.retryPolicy = .none
    options.timeout = timeout
    options.maximumStreamedResponseBytes = limit
    return options
  }

  private func stream(_ model: String, _ options: RequestOptions) -> @Sendable () async throws -> Int {
    let model = server.model(model, requestOptions: options)
    let request = ModelRequest(transcript: Transcript(entries: [.prompt("flood me")]))
    return { try await drainedTextBytes(model.streamResponse(to: request)) }
  }

  func testAStreamWithoutEnd_endsWithResponseTooLargeAtTheLimit_atEveryRate() async throws {
    for (behaviour, limit) in Self.floods {
      let name = "fault-flood~\(behaviour)~\(uniqueID())"
      // The deadline is far beyond the time each flood takes to pass its
      // limit: reaching it would mean the stream had no bound.
      let (outcome, growth) = await peakResidentGrowth {
        await guardedRun(.seconds(60), stream(name, options(limit: limit, timeout: .seconds(15))))
      }
      XCTAssertFalse(outcome.guardFired, "\(behaviour): the stream did not end")
      XCTAssertTrue(
        isResponseTooLarge(outcome.error, limit: limit),
        "\(behaviour): expected responseTooLarge(\(limit)), got \(outcome.result)")
      // Coarse: the limit, the transport's read-ahead and the test's own
      // allocations; an unbounded stream holds every byte the server sent.
      print("stream flood \(behaviour): peak memory rose \(growth >> 10) KiB over a \(limit >> 10) KiB limit")
      XCTAssertLessThan(growth, limit + (64 << 20), "\(behaviour): peak memory rose \(growth >> 20) MiB")
      try await assertWritingStops { try await server.endlessBodiesBeingWritten(name) }
    }
  }

  /// The deadline ends a stream that is still delivering events, steady or
  /// slow, on time (with a generous margin), as `.timedOut`.
  func testTheDeadlineFiresWhileEventsPourIn() async throws {
    let timeout = Duration.seconds(2)
    for behaviour in ["rate-1000~size-1024", "rate-10~size-64"] {
      let name = "fault-flood~\(behaviour)~\(uniqueID())"
      let outcome = await guardedRun(.seconds(30), stream(name, options(timeout: timeout)))
      XCTAssertFalse(outcome.guardFired, "\(behaviour): the deadline did not end the stream")
      XCTAssertTrue(isTimedOut(outcome.error), "\(behaviour): expected timedOut, got \(outcome.result)")
      XCTAssertLessThan(outcome.elapsed, timeout * 2 + .seconds(1), "\(behaviour): the deadline fired late")
      try await assertWritingStops { try await server.endlessBodiesBeingWritten(name) }
    }
  }

  /// A limit of zero or less can never be met: every streamed request is
  /// `invalidOptions`, and nothing is sent.
  func testANonPositiveLimit_isInvalidOptions_andNothingIsSent() async throws {
    for limit in [0, -1, Int.min] {
      let name = "echo~\(uniqueID())"
      let outcome = await guardedRun(.seconds(30), stream(name, options(limit: limit, timeout: .seconds(5))))
      guard isInvalidOptions(outcome.error) else {
        XCTFail("limit \(limit): expected invalidOptions, got \(outcome.result)")
        continue
      }
      let count = try await server.requestCount(name)
      XCTAssertEqual(count, 0, "limit \(limit)")
    }
  }

  /// An answer under the limit arrives whole: about 100 KB of body, 89
  /// events of 1,000 bytes of text, under a limit of 200 KB.
  func testAStreamUnderTheLimit_arrivesWhole() async throws {
    let name = "fault-flood~rate-0~size-1000~cap-100000~\(uniqueID())"
    let outcome = await guardedRun(.seconds(30), stream(name, options(limit: 200_000, timeout: .seconds(10))))
    XCTAssertEqual(try outcome.result.get(), 89_000)
  }

}
