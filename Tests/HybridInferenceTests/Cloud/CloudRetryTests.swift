import Foundation
import HybridInference
import Synchronization
import XCTest

/// Retries: which failures are tried again, how long the client waits, and
/// that every retry is logged.
class CloudRetryTests: CloudTestCase {
  func test429WithRetryInfo_waitsAtLeastTheServersDelayThenSucceeds() async throws {
    let name = "fault-429~retry-0.3s~\(uniqueID())"
    let logs = CloudLogRecorder()
    let session = self.session(name, logHandler: logs.handler)
    let start = ContinuousClock.now
    let response = try await session.respond(to: "hello")
    let elapsed = ContinuousClock.now - start
    XCTAssertEqual(response.content, "echo: hello")
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 2, "one 429, then the retry")
    XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(300), "RetryInfo.retryDelay is honoured")
    let retries = logs.records.filter { $0.category == .cloud }
    XCTAssertEqual(retries.count, 1, "each retry is logged")
    XCTAssertTrue(retries.first?.message.contains("429") == true, retries.first?.message ?? "")
  }

  func test429_retriedUpToMaxAttemptsThenThrown() async throws {
    let name = "fault-429~times-5~retry-0.01s~\(uniqueID())"
    let error = await captureError { try await self.session(name).respond(to: "hello") }
    let apiError = cloudAPIError(error)
    XCTAssertEqual(apiError?.httpStatus, 429)
    XCTAssertEqual(apiError?.status, "RESOURCE_EXHAUSTED")
    XCTAssertEqual(apiError?.retryDelay, .milliseconds(10))
    XCTAssertEqual(apiError?.quotaIds, ["GenerateRequestsPerMinutePerProjectPerModel-FreeTier"])
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 3, "maxAttempts is 3")
  }

  func test500ThenSuccess_andStreamed503ThenSuccess() async throws {
    let unary = "fault-500~\(uniqueID())"
    let response = try await session(unary).respond(to: "one")
    XCTAssertEqual(response.content, "echo: one")
    let unaryCount = try await server.requestCount(unary)
    XCTAssertEqual(unaryCount, 2)

    let streamed = "fault-503~times-2~\(uniqueID())"
    let result = await collectSnapshots(session(streamed).streamResponse(to: "two"))
    XCTAssertNil(result.error)
    XCTAssertEqual(result.snapshots.last?.content, "echo: two")
    let streamedCount = try await server.requestCount(streamed)
    XCTAssertEqual(streamedCount, 3)
  }

  func testPerDayQuota429_isNotRetried() async throws {
    let name = "fault-429-per-day~\(uniqueID())"
    let error = await captureError { try await self.session(name).respond(to: "hello") }
    XCTAssertEqual(cloudAPIError(error)?.quotaIds, ["GenerateRequestsPerDayPerProjectPerModel-FreeTier"])
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1)
  }

  func test400_isNotRetried() async throws {
    let name = "fault-400~\(uniqueID())"
    let error = await captureError { try await self.session(name).respond(to: "hello") }
    XCTAssertEqual(cloudAPIError(error)?.status, "INVALID_ARGUMENT")
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1)
  }

  func testResetOrCloseAfterTheRequestWasRead_isNotRetriedForAGeneration() async throws {
    // The server has read the whole request when it drops the connection:
    // it may be generating (and billing) already, so the client must not
    // send the request again, unary or streamed. The server counts what it saw.
    for fault in ["fault-reset-before", "fault-close-before"] {
      let name = "\(fault)~times-2~\(uniqueID())"
      let error = await captureError { try await self.session(name).respond(to: "again") }
      guard case .connectionLost? = error as? HybridInferenceError else {
        XCTFail("\(fault): expected .connectionLost, got \(String(describing: error))")
        continue
      }
      let count = try await server.requestCount(name)
      XCTAssertEqual(count, 1, "\(fault): one generation request, never a second")
    }
    let streamed = "fault-reset-before~\(uniqueID())"
    let result = await collectSnapshots(session(streamed).streamResponse(to: "again"))
    XCTAssertTrue(result.snapshots.isEmpty)
    XCTAssertEqual(connectionLostError(result.error)?.code, .networkConnectionLost)
    let streamedCount = try await server.requestCount(streamed)
    XCTAssertEqual(streamedCount, 1, "a stream that delivered nothing is not sent twice either")
  }

  func testResetAfterTheRequestWasRead_isRetriedForCountTokens() async throws {
    // Counting runs nothing and costs nothing: sending it again is safe.
    for fault in ["fault-reset-before", "fault-close-before"] {
      let name = "\(fault)~times-2~\(uniqueID())"
      let tokens = try await server.model(name).countTokens("one two three")
      XCTAssertEqual(tokens, 3, fault)
      let count = try await server.requestCount(name)
      XCTAssertEqual(count, 3, "\(fault): two resets, then the answer")
    }
  }

  func testRetryPolicyNone_reportsTheFirstFailure() async throws {
    let name = "fault-503~\(uniqueID())"
    let options = RequestOptions(retryPolicy: .none)
    let error = await captureError {
      try await self.session(name, requestOptions: options).respond(to: "hello")
    }
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 503)
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1)
  }

  func testARetryThatWouldPassTheTimeout_isNotAttempted() async throws {
    let name = "fault-429~retry-30s~\(uniqueID())"
    let options = RequestOptions(timeout: .seconds(5), retryPolicy: RequestOptions.fastTests.retryPolicy)
    let start = ContinuousClock.now
    let error = await captureError {
      try await self.session(name, requestOptions: options).respond(to: "hello")
    }
    XCTAssertEqual(cloudAPIError(error)?.retryDelay, .seconds(30))
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(2), "no 30 s wait inside a 5 s budget")
  }

  func testStreamIsNotRetriedAfterTextWasDelivered() async throws {
    let name = "fault-stream-error~\(uniqueID())"
    let result = await collectSnapshots(session(name).streamResponse(to: "hello"))
    XCTAssertEqual(result.snapshots.count, 1, "the first event arrived")
    XCTAssertEqual(cloudAPIError(result.error)?.httpStatus, 503, "a retryable status, but text was out")
    let count = try await server.requestCount(name)
    XCTAssertEqual(count, 1)
  }
}

/// Collects log records of any category.
final class CloudLogRecorder: Sendable {
  private let storage = Mutex<[LogRecord]>([])

  var handler: LogHandler {
    LogHandler { record in self.storage.withLock { $0.append(record) } }
  }

  var records: [LogRecord] { storage.withLock { $0 } }
}
