import Foundation
import HybridInference
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Offline detection, and the prefer-cloud fallback it drives (the
/// Architecture article, "Routing rules" and "Testing").
class CloudOfflineTests: CloudTestCase {
  private func closedPortURL() throws -> URL {
    try XCTUnwrap(URL(string: "http://127.0.0.1:\(try closedLoopbackPort())"))
  }

  private func model(at baseURL: URL, options: RequestOptions? = nil) -> CloudGeminiModel {
    var options = options ?? testOptions
    options.transport = type(of: self).transport
    return CloudGeminiModel(
      name: "echo", apiKey: GeminiTestServer.apiKey, baseURL: baseURL, requestOptions: options,
      logHandler: .silent)
  }

  func testClosedLoopbackPort_isOfflineAndNotRetried() async throws {
    let cloud = model(at: try closedPortURL())
    let session = GenerativeModelSession(model: cloud, logHandler: .silent)
    let start = ContinuousClock.now
    let error = await captureError { try await session.respond(to: "hi") }
    XCTAssertEqual(offlineError(error)?.code, .cannotConnectToHost)
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(1), "no retry waits for a refused connection")
    let streamed = await collectSnapshots(session.streamResponse(to: "hi")).error
    XCTAssertEqual(offlineError(streamed)?.code, .cannotConnectToHost)
  }

  func testUnresolvableHost_isOffline() async throws {
    let cloud = model(at: try XCTUnwrap(URL(string: "https://nonexistent.invalid")))
    let error = await captureError {
      try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "hi")
    }
    let code = offlineError(error)?.code
    XCTAssertTrue(code == .cannotFindHost || code == .dnsLookupFailed, "\(String(describing: code))")
  }

  func testHTTPStatusIsNeverOffline() async throws {
    for fault in ["fault-500", "fault-503", "fault-html-502", "fault-400"] {
      let session = self.session(
        "\(fault)~times-9", requestOptions: RequestOptions(retryPolicy: .none))
      let error = await captureError { try await session.respond(to: "hi") }
      XCTAssertNotNil(cloudAPIError(error), fault)
    }
  }

  func testPreferCloud_closedPort_fallsBackToTheLocalModelAndLogsIt() async throws {
    let cloud = model(at: try closedPortURL())
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["from ", "device"])])
    let logs = LogRecorder()
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: logs.handler)
    let response = try await session.respond(to: "hi")
    XCTAssertEqual(response.content, "from device")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
    let fallback = try XCTUnwrap(logs.fallbacks.first)
    XCTAssertEqual(fallback.from, "echo")
    guard case .failed(let reason) = fallback.reason,
      case .offline? = reason as? HybridInferenceError
    else { return XCTFail("fallback reason: \(fallback.reason)") }

    local.enqueue(.answer(["streamed ", "locally"]))
    let streamed = try await session.streamResponse(to: "again").collect()
    XCTAssertEqual(streamed.content, "streamed locally")
    XCTAssertEqual(session.transcript.entries.count, 4)
  }

  func testPreferCloud_unresolvableHost_fallsBack() async throws {
    let cloud = model(at: try XCTUnwrap(URL(string: "https://nonexistent.invalid")))
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["local"])])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let response = try await session.respond(to: "hi")
    XCTAssertEqual(response.rawResponse.modelVersion, "local")
  }

  func testPreferCloud_connectTimeout_fallsBack() async throws {
    let options = RequestOptions(timeout: .seconds(30), connectTimeout: .milliseconds(300))
    let cloud = model(at: try await server.blackholeURL(), options: options)
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["local"])])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let result = await collectSnapshots(session.streamResponse(to: "hi"))
    XCTAssertNil(result.error)
    XCTAssertEqual(result.snapshots.last?.rawResponse.modelVersion, "local")
  }

  func testPreferCloud_500And400_doNotFallBack() async throws {
    for fault in ["fault-500~times-9", "fault-400"] {
      let cloud = server.model(fault, requestOptions: RequestOptions(retryPolicy: .none))
      let local = ScriptedModel("local", placement: .onDevice)
      let session = GenerativeModelSession(
        model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
      let error = await captureError { try await session.respond(to: "hi") }
      XCTAssertNotNil(cloudAPIError(error), fault)
      XCTAssertTrue(local.requests.isEmpty, "\(fault) must not reach the local model")
      let streamed = await collectSnapshots(session.streamResponse(to: "hi")).error
      XCTAssertNotNil(cloudAPIError(streamed), fault)
      XCTAssertTrue(local.requests.isEmpty, "\(fault) must not reach the local model when streaming")
    }
  }

  func testPreferCloud_cloudAnswers_localIsNotAsked() async throws {
    let local = ScriptedModel("local", placement: .onDevice)
    let session = GenerativeModelSession(
      model: .hybridModel(primary: server.model("echo"), secondary: local), logHandler: .silent)
    let response = try await session.respond(to: "hi")
    XCTAssertEqual(response.content, "echo: hi")
    XCTAssertEqual(response.rawResponse.modelVersion, "echo-model")
    XCTAssertTrue(local.requests.isEmpty)
  }
}
