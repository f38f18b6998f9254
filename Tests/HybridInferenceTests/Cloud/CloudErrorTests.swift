import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Each fault of the wire becomes the right typed error.
final class CloudErrorTests: CloudTestCase {
  private let once = RequestOptions(timeout: .seconds(20), retryPolicy: .none)

  func testHTMLBadGateway_isTypedWithoutGoogleStatus() async throws {
    for streaming in [false, true] {
      let session = self.session("fault-html-502~\(uniqueID())", requestOptions: once)
      let error: (any Error)? =
        streaming
        ? await collectSnapshots(session.streamResponse(to: "hi")).error
        : await captureError { try await session.respond(to: "hi") }
      let apiError = cloudAPIError(error)
      XCTAssertEqual(apiError?.httpStatus, 502)
      XCTAssertNil(apiError?.status, "not Google's JSON, so no status name")
      XCTAssertFalse(apiError?.message.contains("<html>") ?? true, "the page itself is not the message")
      XCTAssertTrue(apiError?.message.contains("502") ?? false)
    }
  }

  func testHTMLBadGateway_isRetriedLikeAny502() async throws {
    let name = "fault-html-502~times-1~\(uniqueID())"
    let response = try await session(name).respond(to: "hi")
    XCTAssertEqual(response.content, "echo: hi")
  }

  func testMalformedJSON_isMalformedResponse() async throws {
    let unary = await captureError { try await self.session("fault-malformed").respond(to: "hi") }
    guard case .malformedResponse? = unary as? HybridInferenceError else {
      return XCTFail("unary: \(String(describing: unary))")
    }
    let streamed = await collectSnapshots(session("fault-malformed").streamResponse(to: "hi")).error
    guard case .malformedResponse? = streamed as? HybridInferenceError else {
      return XCTFail("stream: \(String(describing: streamed))")
    }
  }

  func testEmpty200Body_isMalformedResponse() async throws {
    let unary = await captureError { try await self.session("fault-empty").respond(to: "hi") }
    guard case .malformedResponse? = unary as? HybridInferenceError else {
      return XCTFail("unary: \(String(describing: unary))")
    }
    let streamed = await collectSnapshots(session("fault-empty").streamResponse(to: "hi")).error
    guard case .malformedResponse? = streamed as? HybridInferenceError else {
      return XCTFail("stream: \(String(describing: streamed))")
    }
  }

  func testTruncatedEvent_afterText_endsTheStreamWithMalformedResponse() async throws {
    let result = await collectSnapshots(session("fault-truncated").streamResponse(to: "hello"))
    XCTAssertEqual(result.snapshots.count, 1, "the whole first event arrived")
    XCTAssertTrue("echo: hello".hasPrefix(result.snapshots.first?.content ?? "-"))
    guard case .malformedResponse? = result.error as? HybridInferenceError else {
      return XCTFail("\(String(describing: result.error))")
    }
  }

  func testMidStreamErrorObject_bareOrAsData_isTheTypedAPIError() async throws {
    for fault in ["fault-stream-error", "fault-stream-error-data"] {
      let result = await collectSnapshots(session(fault).streamResponse(to: "hello"))
      XCTAssertEqual(result.snapshots.count, 1, fault)
      let apiError = cloudAPIError(result.error)
      XCTAssertEqual(apiError?.status, "UNAVAILABLE", fault)
      XCTAssertEqual(apiError?.httpStatus, 503, fault)
      XCTAssertEqual(apiError?.message, "The model is overloaded. Please try again later.", fault)
    }
  }

  func testUnknownModel_isNotFound() async throws {
    let error = await captureError { try await self.session("no-such-model").respond(to: "hi") }
    XCTAssertEqual(cloudAPIError(error)?.status, "NOT_FOUND")
  }

  func testWrongKey_isTheServersInvalidArgument() async throws {
    let model = server.model("echo", apiKey: "wrong-key")
    let error = await captureError {
      try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "hi")
    }
    XCTAssertEqual(cloudAPIError(error)?.reason, "API_KEY_INVALID")
  }

  func testMissingKey_isUnavailableBeforeAnyRequest() async throws {
    // An empty environment: a key set in the process's own must not hide the case.
    let model = CloudGeminiModel(
      name: "echo", apiKey: nil, baseURL: server.baseURL, apiVersion: "v1beta",
      requestOptions: .fastTests, safetySettings: nil, logHandler: .silent, environment: [:])
    XCTAssertEqual(model.availability, .unavailable(.missingAPIKey))
    let error = await captureError {
      try await model.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("hi")])))
    }
    guard case .unavailable(_, .missingAPIKey)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let count = try await server.requestCount("echo")
    XCTAssertEqual(count, 0)
  }

  func testSlowBody_pastTheTimeout_isTimedOutNotOffline() async throws {
    let options = RequestOptions(timeout: .milliseconds(700), retryPolicy: .none)
    for streaming in [false, true] {
      let session = self.session("fault-slow-body~delay-5000", requestOptions: options)
      let start = ContinuousClock.now
      let error: (any Error)? =
        streaming
        ? await collectSnapshots(session.streamResponse(to: "hi")).error
        : await captureError { try await session.respond(to: "hi") }
      XCTAssertLessThan(ContinuousClock.now - start, .seconds(3), "the timeout ends the call")
      guard case .timedOut(let limit)? = error as? HybridInferenceError else {
        return XCTFail("streaming \(streaming): \(String(describing: error))")
      }
      XCTAssertEqual(limit, .milliseconds(700))
    }
  }

  func testConnectTimeout_coversOnlyConnecting_notASlowAnswer() async throws {
    // The server takes 1 s to start its answer, well past the 300 ms connect
    // timeout: the connection was made at once, so the answer still comes.
    let options = RequestOptions(timeout: .seconds(10), connectTimeout: .milliseconds(300), retryPolicy: .none)
    let response = try await session("fault-slow-head~delay-1000", requestOptions: options).respond(to: "hi")
    XCTAssertEqual(response.content, "echo: hi")
  }

  func testConnectionThatCannotBeMade_endsAtTheConnectTimeoutAsOffline() async throws {
    let options = RequestOptions(timeout: .seconds(30), connectTimeout: .milliseconds(400), retryPolicy: .none)
    let model = CloudGeminiModel(
      name: "echo", apiKey: GeminiTestServer.apiKey, baseURL: try await server.blackholeURL(),
      requestOptions: options, logHandler: .silent)
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    for streaming in [false, true] {
      let start = ContinuousClock.now
      let error: (any Error)? =
        streaming
        ? await collectSnapshots(session.streamResponse(to: "hi")).error
        : await captureError { try await session.respond(to: "hi") }
      let elapsed = ContinuousClock.now - start
      XCTAssertEqual(offlineError(error)?.code, .timedOut)
      XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(350))
      XCTAssertLessThan(elapsed, .seconds(2), "the connect timeout, not the 30 s overall one")
    }
  }

  func testNoByteBeforeTheTimeout_isTimedOutNotOffline() async throws {
    // Connected, request sent, nothing back: the server is slow, not unreachable.
    let options = RequestOptions(timeout: .milliseconds(500), retryPolicy: .none)
    let session = self.session("fault-slow-head~delay-3000", requestOptions: options)
    let error = await captureError { try await session.respond(to: "hi") }
    guard case .timedOut(let limit)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertEqual(limit, .milliseconds(500))
  }
}
