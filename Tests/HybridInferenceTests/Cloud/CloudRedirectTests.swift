import Foundation
import HybridInference
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The API key stays with its origin (issue 9, point 1): cross-origin
/// redirects are refused, same-origin ones followed, and plain http:// to
/// another machine never carries the key.
class CloudRedirectTests: CloudTestCase {
  func testRedirect307And308ToAnotherPort_isRefusedAndNothingArrivesThere() async throws {
    let other = try GeminiTestServer()
    defer { other.stop() }
    for code in [307, 308] {
      for streaming in [false, true] {
        let session = self.session("redirect-\(code)~port-\(other.port)~\(uniqueID())")
        let error: (any Error)? =
          streaming
          ? await collectSnapshots(session.streamResponse(to: "the secret prompt")).error
          : await captureError { try await session.respond(to: "the secret prompt") }
        guard case .redirectRefused(let from, let to)? = error as? HybridInferenceError else {
          return XCTFail("\(code), streaming \(streaming): \(String(describing: error))")
        }
        XCTAssertEqual(from, "http://127.0.0.1:\(server.port)")
        XCTAssertEqual(to, "http://127.0.0.1:\(other.port)")
        let description = "\(error.map { String(describing: $0) } ?? "")"
        XCTAssertFalse(description.contains(GeminiTestServer.apiKey))
      }
    }
    // The other server records every request with its headers: none came,
    // so neither the key nor the prompt did.
    let arrived = try await other.requestCount("echo")
    XCTAssertEqual(arrived, 0, "the redirect target must receive nothing")
  }

  func testPreferCloud_crossOriginRedirect_isThrownNotAFallback() async throws {
    let other = try GeminiTestServer()
    defer { other.stop() }
    let local = ScriptedModel("local", placement: .onDevice)
    let cloud = server.model("redirect-307~port-\(other.port)")
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let error = await captureError { try await session.respond(to: "hi") }
    guard case .redirectRefused? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testSameOriginRedirect_isFollowedWithTheKey() async throws {
    for code in [307, 308] {
      let name = "redirect-\(code)~\(uniqueID())"
      let response = try await session(name).respond(to: "hi")
      // `echo` answers only with the right key, so the key went along.
      XCTAssertEqual(response.content, "echo: hi", "\(code)")
      let streamed = await collectSnapshots(session(name).streamResponse(to: "again"))
      XCTAssertNil(streamed.error, "\(code)")
      XCTAssertEqual(streamed.snapshots.last?.content, "echo: again", "\(code)")
    }
    let last = try await server.lastRequest("echo")
    XCTAssertEqual(last["keyHeaderPresent"] as? Bool, true)
  }

  func testPlainHTTPToAnotherMachine_isRefusedBeforeAnythingIsSent() async throws {
    // 192.0.2.1 is TEST-NET-1: were anything sent, the call would hang on
    // connecting instead of failing at once.
    let remote = try XCTUnwrap(URL(string: "http://user:pw@192.0.2.1:8080/proxy"))
    let cloud = CloudGeminiModel(
      name: "echo", apiKey: GeminiTestServer.apiKey, baseURL: remote, requestOptions: testOptions,
      logHandler: .silent)
    let session = GenerativeModelSession(model: cloud, logHandler: .silent)
    let start = ContinuousClock.now
    let errors: [(any Error)?] = [
      await captureError { try await session.respond(to: "hi") },
      await collectSnapshots(session.streamResponse(to: "hi")).error,
      await captureError { try await cloud.countTokens("hi") },
    ]
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
    for error in errors {
      guard case .insecureBaseURL(let url)? = error as? HybridInferenceError else {
        return XCTFail("\(String(describing: error))")
      }
      XCTAssertEqual(url, "http://192.0.2.1:8080/proxy", "no credentials in the error")
    }
    // A prefer-cloud hybrid does not mask it either.
    let local = ScriptedModel("local", placement: .onDevice)
    let hybrid = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local), logHandler: .silent)
    let error = await captureError { try await hybrid.respond(to: "hi") }
    guard case .insecureBaseURL? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testPlainHTTPToThisMachine_isAllowed() async throws {
    for host in ["127.0.0.1", "localhost"] {
      let base = try XCTUnwrap(URL(string: "http://\(host):\(server.port)"))
      let cloud = CloudGeminiModel(
        name: "echo", apiKey: GeminiTestServer.apiKey, baseURL: base, requestOptions: testOptions,
        logHandler: .silent)
      let response = try await GenerativeModelSession(model: cloud, logHandler: .silent).respond(to: "hi")
      XCTAssertEqual(response.content, "echo: hi", host)
    }
  }
}
