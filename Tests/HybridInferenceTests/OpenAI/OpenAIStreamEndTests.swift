import Foundation
import GeminiServerProcess
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Issue 20 on the OpenAI-compatible backend, from the Python stub: a cut
/// answer is an error (point 6), a generation is never sent twice once the
/// server may have read it (point 10), and a server's error text arrives
/// bounded and inert (point 8).
final class OpenAIStreamEndTests: XCTestCase {
  private var stub: GeminiServerProcess!

  override func setUp() async throws {
    stub = try OpenAITestServers.stub()
  }

  override func tearDown() async throws {
    stub?.stop()
  }

  private func session(_ name: String) -> GenerativeModelSession {
    GenerativeModelSession(
      model: OpenAICompatibleModel(
        name: name, baseURL: stub.openAIBaseURL, apiKey: nil, requestOptions: .fastTests, logHandler: .silent),
      logHandler: .silent)
  }

  func testStreamClosedWithoutDoneOrAFinishReason_isResponseTruncated() async throws {
    let name = "fault-cut~\(UUID().uuidString)"
    let session = self.session(name)
    let (snapshots, error) = await collectSnapshots(session.streamResponse(to: "there"))
    XCTAssertEqual(snapshots.map(\.content), ["echo: ", "echo: there"], "the text before the cut")
    guard case .responseTruncated(let response)? = error as? HybridInferenceError else {
      return XCTFail("expected .responseTruncated, got \(String(describing: error))")
    }
    XCTAssertEqual(response.text, "echo: there")
    XCTAssertTrue(session.transcript.entries.isEmpty, "a cut answer is not recorded")
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 1, "not retried")
  }

  func testUnaryBodyCutShort_isNeverAnAnswer() async throws {
    let name = "fault-cut~\(UUID().uuidString)"
    let error = await captureError { try await self.session(name).respond(to: "there") }
    switch error as? HybridInferenceError {
    case .connectionLost?, .malformedResponse?: break
    default: XCTFail("expected .connectionLost or .malformedResponse, got \(String(describing: error))")
    }
    let count = try await OpenAITestServers.requestCount(stub, model: name)
    XCTAssertEqual(count, 1, "not retried")
  }

  func testStreamWithAFinishReasonButNoDone_isComplete() async throws {
    // The answer came to its end; only the server's end marker is missing
    // (the cut fell after the last chunk): the text is whole.
    let (snapshots, error) = await collectSnapshots(session("fault-no-done").streamResponse(to: "there"))
    XCTAssertNil(error)
    XCTAssertEqual(snapshots.last?.content, "echo: there")
    XCTAssertEqual(snapshots.last?.rawResponse.finishReason, .stop)
  }

  func testResetAfterTheRequestWasRead_isNotRetried_unaryOrStreamed() async throws {
    let unary = "fault-reset~times-5~\(UUID().uuidString)"
    let error = await captureError { try await self.session(unary).respond(to: "x") }
    XCTAssertEqual(connectionLostError(error)?.code, .networkConnectionLost)
    let unaryCount = try await OpenAITestServers.requestCount(stub, model: unary)
    XCTAssertEqual(unaryCount, 1, "the server may be generating: never sent twice")
    let streamed = "fault-reset~times-5~\(UUID().uuidString)"
    let (snapshots, streamError) = await collectSnapshots(session(streamed).streamResponse(to: "x"))
    XCTAssertTrue(snapshots.isEmpty)
    XCTAssertEqual(connectionLostError(streamError)?.code, .networkConnectionLost)
    let streamedCount = try await OpenAITestServers.requestCount(stub, model: streamed)
    XCTAssertEqual(streamedCount, 1)
  }

  func testKeyQuotedWhereTheTextBodyIsCut_isRedactedWhole() async throws {
    // The 200-character cut of a text/plain line falls inside the key; it is
    // redacted before the cut, so not even its first characters remain.
    let key = "sk-test-SECRET-0123456789"
    let model = OpenAICompatibleModel(
      name: "fault-echo-key-text", baseURL: stub.openAIBaseURL, apiKey: key, requestOptions: .fastTests,
      logHandler: .silent)
    let error = await captureError {
      try await model.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("x")])))
    }
    let message = try XCTUnwrap(cloudAPIError(error)?.message)
    XCTAssertTrue(message.hasPrefix(String(repeating: "x", count: 190) + "<redacted>"), message)
    XCTAssertFalse(message.contains("sk-test"), message)
  }

  func testHostileErrorBodies_areCutAndInert() async throws {
    let envelope = await captureError { try await self.session("fault-hostile-error").respond(to: "x") }
    let apiError = try XCTUnwrap(cloudAPIError(envelope))
    XCTAssertEqual(apiError.httpStatus, 400)
    XCTAssertLessThanOrEqual(apiError.message.utf8.count, ServerText.maximumBytes)
    XCTAssertTrue(apiError.message.hasPrefix("\\u{1B}]52;c;aGk=\\u{7}\\u{1B}[2J\\u{9B}31mAAAA"))
    XCTAssertEqual(apiError.status, "invalid_request_error\\u{1B}[8m")
    XCTAssertEqual(apiError.reason, "hostile\\u{7}")
    let text = await captureError { try await self.session("fault-hostile-text").respond(to: "x") }
    let textError = try XCTUnwrap(cloudAPIError(text))
    XCTAssertEqual(textError.message, "\\u{1B}[2Jupstream \\u{1B}]8;;http://x\\u{7}down\\u{1B}]8;;\\u{7}")
    for error in [envelope, text] {
      let description = String(describing: error)
      XCTAssertFalse(CloudInertErrorTextTests.hasControl(description), description.prefix(80).debugDescription)
      XCTAssertLessThan(description.utf8.count, 5000)
    }
  }
}
