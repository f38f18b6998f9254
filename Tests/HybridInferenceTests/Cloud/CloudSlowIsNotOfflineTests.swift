import Foundation
import HybridInference
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Slow is not offline (issue 9, point 2): only failing to reach the server
/// is `.offline`; a server that was reached and then stalls or drops the
/// connection is thrown, never answered on device by a prefer-cloud hybrid.
class CloudSlowIsNotOfflineTests: CloudTestCase {
  /// The server reads the request and then sends nothing for ten minutes.
  private let silent = "fault-slow-head~delay-600000"
  private let shortDeadline = RequestOptions(
    timeout: .milliseconds(700), connectTimeout: .seconds(5), retryPolicy: .none)

  func testServerThatAcceptsAndNeverAnswers_isTimedOutNotOffline() async throws {
    for streaming in [false, true] {
      let session = self.session("\(silent)~\(uniqueID())", requestOptions: shortDeadline)
      let start = ContinuousClock.now
      let error: (any Error)? =
        streaming
        ? await collectSnapshots(session.streamResponse(to: "hi")).error
        : await captureError { try await session.respond(to: "hi") }
      XCTAssertLessThan(ContinuousClock.now - start, .seconds(4), "the deadline ends the call")
      guard case .timedOut(let limit)? = error as? HybridInferenceError else {
        return XCTFail("streaming \(streaming): \(String(describing: error))")
      }
      XCTAssertEqual(limit, .milliseconds(700))
    }
  }

  func testPreferCloud_stalledServer_throwsTimedOutAndNeverAsksTheDevice() async throws {
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["device"]), .answer(["device"])])
    let cloud = server.model(silent, requestOptions: shortDeadline)
    let logs = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    let error = await captureError { try await session.respond(to: "hi") }
    guard case .timedOut? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let streamed = await collectSnapshots(session.streamResponse(to: "hi"))
    XCTAssertTrue(streamed.snapshots.isEmpty)
    guard case .timedOut? = streamed.error as? HybridInferenceError else {
      return XCTFail("\(String(describing: streamed.error))")
    }
    XCTAssertTrue(local.requests.isEmpty, "a slow cloud is not a reason to answer on device")
    XCTAssertTrue(logs.fallbacks.isEmpty)
    XCTAssertNil(cloud.rememberedFailure, "a timeout is not remembered as offline")
  }

  func testResetAfterTheRequestWasSent_isConnectionLostNotOffline() async throws {
    // The server reads the whole request, then resets the connection.
    let options = RequestOptions(retryPolicy: .none)
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = server.model("fault-reset-before~times-9", requestOptions: options)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let error = await captureError { try await session.respond(to: "hi") }
    guard case .connectionLost? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testFailedTLSHandshake_isOffline() async throws {
    // https:// to a plain-HTTP port: the handshake fails before any request
    // went out, which is what a captive portal or a broken middlebox does.
    let base = try XCTUnwrap(URL(string: "https://127.0.0.1:\(server.port)"))
    let cloud = CloudGeminiModel(
      name: "echo", apiKey: GeminiTestServer.apiKey, baseURL: base,
      requestOptions: RequestOptions(retryPolicy: .none, remembersOffline: false), logHandler: .silent)
    let error = await captureError {
      try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "hi")
    }
    XCTAssertNotNil(offlineError(error))
  }
}
