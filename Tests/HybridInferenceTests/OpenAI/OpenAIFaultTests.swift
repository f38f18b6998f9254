import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Faults a real server will not produce on demand, from the Python stub
/// (Tests/OpenAIServer/openai_stub.py): rate limits, server errors, broken
/// chunks, errors mid-stream, proxy pages. Each is a typed error with the
/// HTTP status, retried where the shared retry policy says so.
final class OpenAIFaultTests: OpenAIStubTestCase {
  private func model(_ name: String, apiKey: String? = OpenAIFaultTests.key, logHandler: LogHandler = .silent)
    -> OpenAICompatibleModel
  {
    OpenAICompatibleModel(
      name: name, baseURL: stub.openAIBaseURL, apiKey: apiKey, requestOptions: .fastTests,
      logHandler: logHandler)
  }

  private func session(_ name: String, logHandler: LogHandler = .silent) -> GenerativeModelSession {
    GenerativeModelSession(model: model(name, logHandler: logHandler), logHandler: logHandler)
  }

  func testEcho_unaryAndStreamed_withTheBearerKey() async throws {
    let unary = try await session("echo").respond(to: "hi")
    XCTAssertEqual(unary.content, "echo: hi")
    XCTAssertEqual(unary.rawResponse.modelVersion, "echo", "the server's model field")
    XCTAssertEqual(unary.rawResponse.usageMetadata?.totalTokenCount, 8)
    let (snapshots, error) = await collectSnapshots(session("echo").streamResponse(to: "there"))
    XCTAssertNil(error)
    XCTAssertEqual(snapshots.map(\.content), ["echo: ", "echo: there", "echo: there", "echo: there"])
    XCTAssertEqual(snapshots.last?.rawResponse.usageMetadata?.totalTokenCount, 8, "the usage-only last chunk")
    XCTAssertEqual(snapshots.last?.rawResponse.finishReason, .stop)
  }

  func testWrongKey_is401_andTheKeyIsInNoErrorOrDescription() async throws {
    let secret = "sk-wrong-SECRET-abcdef"
    let error = await captureError { try await self.model("echo", apiKey: secret).respond(to: Self.request("x")) }
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 401)
    XCTAssertEqual(cloudAPIError(error)?.reason, "invalid_api_key")
    let echoed = await captureError {
      try await self.model("fault-echo-key", apiKey: secret).respond(to: Self.request("x"))
    }
    let model = self.model("echo", apiKey: secret)
    var dumped = ""
    dump(model, to: &dumped)
    for text in [
      "\(String(describing: error))", "\(String(describing: echoed))", model.description,
      model.debugDescription, dumped, model.baseURL.absoluteString,
    ] {
      XCTAssertFalse(text.contains(secret), text)
    }
    XCTAssertTrue(cloudAPIError(echoed)?.message.contains("<redacted>") == true)
  }

  func test429WithRetryAfter_waitsThenSucceeds() async throws {
    let name = "fault-429~retry-0.3~\(UUID().uuidString)"
    let logs = CloudLogRecorder()
    let start = ContinuousClock.now
    let response = try await session(name, logHandler: logs.handler).respond(to: "hello")
    XCTAssertEqual(response.content, "echo: hello")
    XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(300), "Retry-After is honoured")
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 2)
    XCTAssertEqual(logs.records.filter { $0.category == .cloud }.count, 1, "the retry is logged")
  }

  func test429_retriedUpToMaxAttempts_thenThrownWithTheDelay() async throws {
    let name = "fault-429~times-9~retry-0.01~\(UUID().uuidString)"
    let error = await captureError { try await self.session(name).respond(to: "hello") }
    let apiError = cloudAPIError(error)
    XCTAssertEqual(apiError?.httpStatus, 429)
    XCTAssertEqual(apiError?.status, "rate_limit_exceeded")
    XCTAssertEqual(apiError?.retryDelay, .milliseconds(10))
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 3, "maxAttempts is 3")
  }

  func test500_retriedThenSucceeds_andAlways500IsThrown() async throws {
    let once = "fault-500~times-1~\(UUID().uuidString)"
    let response = try await session(once).respond(to: "one")
    XCTAssertEqual(response.content, "echo: one")
    let always = "fault-500~\(UUID().uuidString)"
    let (_, error) = await collectSnapshots(session(always).streamResponse(to: "two"))
    let apiError = cloudAPIError(error)
    XCTAssertEqual(apiError?.httpStatus, 500)
    XCTAssertEqual(apiError?.status, "server_error")
    XCTAssertEqual(apiError?.message, "The server had an error")
  }

  func testNonJSON502Page_isATypedErrorWithoutThePage() async throws {
    let error = await captureError { try await self.session("fault-html-502").respond(to: "x") }
    let apiError = cloudAPIError(error)
    XCTAssertEqual(apiError?.httpStatus, 502)
    XCTAssertNil(apiError?.status)
    XCTAssertTrue(apiError?.message.contains("text/html") == true, apiError?.message ?? "")
    XCTAssertFalse(apiError?.message.contains("secret page") ?? true)
    let text = await captureError { try await self.session("fault-text-503").respond(to: "x") }
    XCTAssertEqual(cloudAPIError(text)?.httpStatus, 503)
    XCTAssertEqual(cloudAPIError(text)?.message, "upstream unavailable", "a plain-text body's first line")
  }

  func test400_isNotRetried() async throws {
    let error = await captureError { try await self.session("fault-400").respond(to: "x") }
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 400)
    XCTAssertEqual(cloudAPIError(error)?.reason, "invalid_value")
    let count = try await OpenAITestServers.requestCount(stub, model: "fault-400")
    XCTAssertEqual(count, 1)
  }

  func testMalformedChunk_endsTheStreamAfterTheContentSoFar() async throws {
    let (snapshots, error) = await collectSnapshots(session("fault-malformed-chunk").streamResponse(to: "x"))
    XCTAssertEqual(snapshots.map(\.content), ["echo: "])
    guard case .malformedResponse? = error as? HybridInferenceError else {
      return XCTFail("expected .malformedResponse, got \(String(describing: error))")
    }
  }

  func testErrorMidStream_isTheTypedErrorAndNotRetried() async throws {
    let name = "fault-stream-error~\(UUID().uuidString)"
    let (snapshots, error) = await collectSnapshots(session(name).streamResponse(to: "x"))
    XCTAssertEqual(snapshots.map(\.content), ["echo: "])
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 500)
    XCTAssertEqual(cloudAPIError(error)?.message, "the slot was cancelled")
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 1, "content had been delivered: never retried")
    let first = "fault-stream-error-first~\(UUID().uuidString)"
    let (none, early) = await collectSnapshots(session(first).streamResponse(to: "x"))
    XCTAssertTrue(none.isEmpty)
    XCTAssertEqual(cloudAPIError(early)?.httpStatus, 503)
    let retried = try await OpenAITestServers.requestCount(stub, model: first)
    XCTAssertEqual(retried, 3, "nothing delivered yet: a 503 is retried")
  }

  private static func request(_ text: String) -> ModelRequest {
    ModelRequest(transcript: Transcript(entries: [.prompt(text)]))
  }
}
