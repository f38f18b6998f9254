import Foundation
import HybridInference
import XCTest

@testable import HybridInferenceCore

/// The OpenAI-compatible backend's streams are bounded in all too
/// (`maximumStreamedResponseBytes`), through both HTTP clients: a stub
/// that streams content chunks without end is cut at the limit with
/// `.responseTooLarge` and hung up on, and the deadline fires while chunks
/// pour in.
final class OpenAIStreamSizeTests: OpenAIStubTestCase {
  private func model(
    _ name: String, transport: RequestOptions.Transport, limit: Int, timeout: Duration
  ) -> OpenAICompatibleModel {
    var options = RequestOptions.fastTests
    options.retryPolicy = .none
    options.transport = transport
    options.timeout = timeout
    options.maximumStreamedResponseBytes = limit
    return OpenAICompatibleModel(
      name: name, baseURL: stub.openAIBaseURL, apiKey: Self.key, requestOptions: options, logHandler: .silent)
  }

  private func drain(_ model: OpenAICompatibleModel) -> @Sendable () async throws -> Int {
    let request = ModelRequest(transcript: Transcript(entries: [.prompt("flood me")]))
    return { try await drainedTextBytes(model.streamResponse(to: request)) }
  }

  func testAStreamWithoutEnd_endsWithResponseTooLarge_throughBothClients() async throws {
    let floods: [(behaviour: String, limit: Int)] = [
      ("rate-0~size-16384~cap-\(192 << 20)", 2 << 20), ("rate-400~size-1024", 128 << 10),
    ]
    for transport in [RequestOptions.Transport.automatic, .urlSession] {
      for (behaviour, limit) in floods {
        let name = "fault-flood~\(behaviour)~\(uniqueID())"
        let flooding = model(name, transport: transport, limit: limit, timeout: .seconds(15))
        let (outcome, growth) = await peakResidentGrowth { await guardedRun(.seconds(60), drain(flooding)) }
        let what = "\(transport), \(behaviour)"
        XCTAssertFalse(outcome.guardFired, "\(what): the stream did not end")
        XCTAssertTrue(
          isResponseTooLarge(outcome.error, limit: limit), "\(what): expected responseTooLarge, got \(outcome.result)")
        print("stream flood \(what): peak memory rose \(growth >> 10) KiB over a \(limit >> 10) KiB limit")
        XCTAssertLessThan(growth, limit + (64 << 20), "\(what): peak memory rose \(growth >> 20) MiB")
        try await assertWritingStops { try await OpenAITestServers.floodsBeingWritten(stub, model: name) }
      }
    }
  }

  func testTheDeadlineFiresWhileChunksPourIn_throughBothClients() async throws {
    let timeout = Duration.seconds(2)
    for transport in [RequestOptions.Transport.automatic, .urlSession] {
      for behaviour in ["rate-1000~size-1024", "rate-10~size-64"] {
        let name = "fault-flood~\(behaviour)~\(uniqueID())"
        let flooding = model(
          name, transport: transport, limit: RequestOptions.defaultMaximumStreamedResponseBytes, timeout: timeout)
        let outcome = await guardedRun(.seconds(30), drain(flooding))
        let what = "\(transport), \(behaviour)"
        XCTAssertFalse(outcome.guardFired, "\(what): the deadline did not end the stream")
        XCTAssertTrue(isTimedOut(outcome.error), "\(what): expected timedOut, got \(outcome.result)")
        XCTAssertLessThan(outcome.elapsed, timeout * 2 + .seconds(1), "\(what): the deadline fired late")
        try await assertWritingStops { try await OpenAITestServers.floodsBeingWritten(stub, model: name) }
      }
    }
  }

}
