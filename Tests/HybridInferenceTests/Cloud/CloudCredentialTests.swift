import Foundation
import Synchronization
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// A bearer-token provider that hands out `tokens` in order (the last one
/// again once they run out) and counts its calls; `delay` keeps calls open
/// long enough for concurrent requests to meet them.
final class TokenScript: Sendable {
  private let state: Mutex<(calls: Int, tokens: [String])>
  private let delay: Duration

  init(_ tokens: [String], delay: Duration = .zero) {
    state = Mutex((0, tokens))
    self.delay = delay
  }

  var calls: Int { state.withLock { $0.calls } }

  var credential: Credential {
    .bearerToken { [self] in
      if delay > .zero { try await Task.sleep(for: delay) }
      return state.withLock { state in
        state.calls += 1
        return state.tokens[min(state.calls, state.tokens.count) - 1]
      }
    }
  }
}

/// Credentials (issue 24, point 2): bearer tokens asked again once on 401,
/// one refresh for concurrent 401s, a provider that throws as a typed error,
/// the metadata server's token kept until it expires, no token across a
/// redirect or in any text.
final class CloudCredentialTests: CloudTestCase {
  private struct ProviderFailure: Error {}

  private func model(
    _ name: String, authorization: Credential?, apiKey: String? = nil, environment: [String: String] = [:],
    logHandler: LogHandler = .silent
  ) -> CloudGeminiModel {
    CloudGeminiModel(
      name: name, apiKey: apiKey, baseURL: server.baseURL, authorization: authorization,
      requestOptions: .fastTests, logHandler: logHandler, environment: environment)
  }

  private static func prompt(_ text: String) -> ModelRequest {
    ModelRequest(transcript: Transcript(entries: [.prompt(text)]))
  }

  func testABearerTokenMakesTheGeminiAPIAvailableWithoutAKey_andWinsOverTheKey() async throws {
    let name = "echo~\(uniqueID())"
    XCTAssertEqual(model(name, authorization: nil).availability, .unavailable(.missingAPIKey))
    let bearer = model(name, authorization: .bearerToken { "ya29.valid-1" })
    XCTAssertEqual(bearer.availability, .available)
    let answer = try await bearer.respond(to: Self.prompt("hi"))
    XCTAssertEqual(answer.text, "echo: hi")
    var request = try await server.lastRequest(name)
    XCTAssertEqual(request["bearer"] as? String, "ya29.valid-1")
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, false)
    // Explicit authorization beats the parameter and the environment.
    let both = model(
      name, authorization: .bearerToken { "ya29.valid-2" }, apiKey: GeminiTestServer.apiKey,
      environment: ["GEMINI_API_KEY": GeminiTestServer.apiKey])
    _ = try await both.respond(to: Self.prompt("hi"))
    request = try await server.lastRequest(name)
    XCTAssertEqual(request["bearer"] as? String, "ya29.valid-2")
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, false)
    // An explicit key credential goes in x-goog-api-key, as the parameter does.
    _ = try await model(name, authorization: .apiKey(GeminiTestServer.apiKey)).respond(to: Self.prompt("hi"))
    request = try await server.lastRequest(name)
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, true)
    XCTAssertNil(request["bearer"] as? String)
  }

  func testA401AsksTheProviderOnceMore_thenTheTokenIsKept() async throws {
    let name = "echo~\(uniqueID())"
    let script = TokenScript(["ya29.stale", "ya29.valid-fresh"])
    let model = model(name, authorization: script.credential)
    let first = try await model.respond(to: Self.prompt("one"))
    XCTAssertEqual(first.text, "echo: one")
    XCTAssertEqual(script.calls, 2, "asked, refused with 401, asked once more")
    let streamed = await collectSnapshots(
      GenerativeModelSession(model: model, logHandler: .silent).streamResponse(to: "two"))
    XCTAssertNil(streamed.error)
    let count = try await model.countTokens("three four")
    XCTAssertEqual(count, 2)
    XCTAssertEqual(script.calls, 2, "the fresh token is kept for later requests and copies")
    let bearers = try await server.allRequests(name).map { $0["bearer"] as? String }
    XCTAssertEqual(bearers, ["ya29.stale", "ya29.valid-fresh", "ya29.valid-fresh", "ya29.valid-fresh"])

    // A provider whose new token is refused too: the second 401 is thrown, no third try.
    let refused = TokenScript(["ya29.stale"])
    let stuck = self.model("echo~\(uniqueID())", authorization: refused.credential)
    let error = await captureError { try await stuck.respond(to: Self.prompt("x")) }
    XCTAssertEqual(cloudAPIError(error)?.httpStatus, 401)
    XCTAssertEqual(refused.calls, 2)
  }

  func testConcurrent401s_shareOneRefresh() async throws {
    let name = "echo~\(uniqueID())"
    let script = TokenScript(["ya29.stale", "ya29.valid-shared"], delay: .milliseconds(100))
    let model = model(name, authorization: script.credential)
    try await withThrowingTaskGroup(of: String.self) { group in
      for index in 0..<8 {
        group.addTask { try await model.respond(to: Self.prompt("n\(index)")).text }
      }
      var answers: Set<String> = []
      for try await answer in group { answers.insert(answer) }
      XCTAssertEqual(answers.count, 8)
    }
    XCTAssertEqual(script.calls, 2, "one fetch for the first token, one refresh for all eight 401s")
    let requests = try await server.allRequests(name)
    XCTAssertEqual(requests.count, 16)
    XCTAssertEqual(requests.filter { $0["bearer"] as? String == "ya29.valid-shared" }.count, 8)
  }

  func testAProviderThatThrows_isATypedErrorNamingIt_andNothingIsSent() async throws {
    let name = "echo~\(uniqueID())"
    let failing = model(name, authorization: .bearerToken { throw ProviderFailure() })
    for run in [false, true] {
      let error: (any Error)? =
        run
        ? await collectSnapshots(GenerativeModelSession(model: failing, logHandler: .silent).streamResponse(to: "hi"))
          .error
        : await captureError { try await failing.respond(to: Self.prompt("hi")) }
      guard case .authorizationFailed(let credential, let cause)? = error as? HybridInferenceError else {
        return XCTFail("\(String(describing: error))")
      }
      XCTAssertEqual(credential, "bearer token provider")
      XCTAssertTrue(cause is ProviderFailure)
      XCTAssertTrue("\(error.map { String(describing: $0) } ?? "")".contains("bearer token provider"))
    }
    // A token that could smuggle a header in is refused before anything is sent.
    let smuggling = model(name, authorization: .bearerToken { "ya29.valid\r\nX-Injected: 1" })
    let error = await captureError { try await smuggling.respond(to: Self.prompt("hi")) }
    guard case .authorizationFailed(_, HybridInferenceError.malformedResponse)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let arrived = try await server.requestCount(name)
    XCTAssertEqual(arrived, 0)
    // Not offline: a prefer-cloud hybrid throws it rather than answering on device.
    let local = ScriptedModel("local", placement: .onDevice)
    let hybrid = GenerativeModelSession(model: .hybridModel(primary: failing, secondary: local), logHandler: .silent)
    let thrown = await captureError { try await hybrid.respond(to: "hi") }
    guard case .authorizationFailed? = thrown as? HybridInferenceError else {
      return XCTFail("\(String(describing: thrown))")
    }
    XCTAssertTrue(local.requests.isEmpty)
  }

  func testCancellingARequestWhileTheProviderHangs_endsItPromptly() async throws {
    let name = "echo~\(uniqueID())"
    let hanging = model(
      name,
      authorization: .bearerToken {
        try? await Task.sleep(for: .seconds(600))  // ignores cancellation, as a stuck provider would
        return "ya29.valid-late"
      })
    let started = ContinuousClock.now
    let request = Task { () async throws -> String in
      try await hanging.respond(to: ModelRequest(transcript: Transcript(entries: [.prompt("hi")]))).text
    }
    try await Task.sleep(for: .milliseconds(100))
    request.cancel()
    let error = await captureError { try await request.value }
    XCTAssertTrue(error is CancellationError, "\(String(describing: error))")
    XCTAssertLessThan(ContinuousClock.now - started, .seconds(30), "a hang guard, not a speed test")
    let arrived = try await server.requestCount(name)
    XCTAssertEqual(arrived, 0)
  }

  func testMetadataServerToken_isKeptUntilItExpires() async throws {
    let name = "echo~\(uniqueID())"
    let environment = ["GCE_METADATA_HOST": server.metadataHost]
    let cached = model(name, authorization: .metadataServer, environment: environment)
    XCTAssertEqual(cached.availability, .available)
    for index in 0..<3 { _ = try await cached.respond(to: Self.prompt("n\(index)")) }
    var fetches = try await server.requestCount("_metadata")
    XCTAssertEqual(fetches, 1, "one token for three requests (expires_in 3600)")
    let metadataRequest = try await server.lastRequest("_metadata")
    XCTAssertEqual((metadataRequest["headers"] as? [String: String])?["Metadata-Flavor"], "Google")
    let bearers = try await server.allRequests(name).compactMap { $0["bearer"] as? String }
    XCTAssertEqual(bearers, Array(repeating: "ya29.valid-meta-1", count: 3))

    // A token that expires at once is fetched again for every request.
    try await server.configureMetadata(expiresIn: 0)
    let expiring = model(name, authorization: .metadataServer, environment: environment)
    for index in 0..<2 { _ = try await expiring.respond(to: Self.prompt("e\(index)")) }
    fetches = try await server.requestCount("_metadata")
    XCTAssertEqual(fetches, 3)

    // A token without expires_in is kept until a 401, as the app's tokens are.
    try await server.configureMetadata(expiresIn: nil)
    let unsaid = model(name, authorization: .metadataServer, environment: environment)
    for index in 0..<3 { _ = try await unsaid.respond(to: Self.prompt("u\(index)")) }
    fetches = try await server.requestCount("_metadata")
    XCTAssertEqual(fetches, 4, "one token for three requests (no expires_in)")

    // A failing metadata server is a typed error naming it; so is none at all.
    try await server.configureMetadata(status: 500)
    let failing = model(name, authorization: .metadataServer, environment: environment)
    var error = await captureError { try await failing.respond(to: Self.prompt("x")) }
    guard case .authorizationFailed("metadata server", _)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let closed = try closedLoopbackPort()
    let absent = model(name, authorization: .metadataServer, environment: ["GCE_METADATA_HOST": "127.0.0.1:\(closed)"])
    error = await captureError { try await absent.respond(to: Self.prompt("x")) }
    guard case .authorizationFailed("metadata server", HybridInferenceError.offline)? = error as? HybridInferenceError
    else {
      return XCTFail("\(String(describing: error))")
    }
  }

  /// After a 401, the token another request fetched meanwhile is used only
  /// while it is fresh: an expired one would just be refused again.
  func testARefusedTokenIsReplaced_notByAnExpiredOne() async throws {
    let calls = Mutex(0)
    let cache = TokenCache {
      let call = calls.withLock { calls in
        calls += 1
        return calls
      }
      // Every token is already due for renewal when it arrives.
      return try BearerToken.checked("t\(call)", renewAt: .now - .seconds(1))
    }
    let refused = try await cache.token(deadline: .now + .seconds(5), timedOut: .timedOut(.seconds(5)))
    XCTAssertEqual(refused.secret.value, "t1")
    // Another request finds t1 expired and fetches t2, which expires too.
    let other = try await cache.token(deadline: .now + .seconds(5), timedOut: .timedOut(.seconds(5)))
    XCTAssertEqual(other.secret.value, "t2")
    let replacement = try await cache.token(
      replacing: refused, deadline: .now + .seconds(5), timedOut: .timedOut(.seconds(5)))
    XCTAssertEqual(replacement.secret.value, "t3")
  }

  func testATokenIsNeverCarriedAcrossARedirectToAnotherOrigin() async throws {
    let other = try GeminiTestServer()
    defer { other.stop() }
    let model = model("redirect-307~port-\(other.port)", authorization: .bearerToken { "ya29.valid-SECRET" })
    for streaming in [false, true] {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      let error: (any Error)? =
        streaming
        ? await collectSnapshots(session.streamResponse(to: "hi")).error
        : await captureError { try await session.respond(to: "hi") }
      guard case .redirectRefused? = error as? HybridInferenceError else {
        return XCTFail("\(String(describing: error))")
      }
      XCTAssertFalse(String(describing: error).contains("SECRET"))
    }
    let arrived = try await other.requestCount("echo")
    XCTAssertEqual(arrived, 0)
  }

  func testTheTokenShowsInNoDescriptionErrorOrLogLine() async throws {
    let logs = CloudLogRecorder()
    let token = "ya29.valid-SECRET-0123"
    var renderings: [String] = []
    for name in ["fault-echo-key", "fault-500~times-9", "fault-stream-error"] {
      let model = model(name, authorization: .bearerToken { token }, logHandler: logs.handler)
      let session = GenerativeModelSession(model: model, logHandler: logs.handler)
      if let error = await captureError({ try await session.respond(to: "hi") }) {
        renderings += [String(describing: error), String(reflecting: error), error.localizedDescription]
        if name == "fault-echo-key" { XCTAssertTrue(cloudAPIError(error)?.message.contains("<redacted>") ?? false) }
      }
      if let error = await collectSnapshots(session.streamResponse(to: "hi")).error {
        renderings.append(String(describing: error))
      }
      var dumped = ""
      dump(model, to: &dumped)
      renderings += [
        model.description, model.debugDescription, dumped, String(describing: Credential.bearerToken { token }),
      ]
    }
    renderings += logs.records.map(\.message)
    XCTAssertFalse(logs.records.isEmpty)
    for text in renderings { XCTAssertFalse(text.contains("SECRET"), text) }
  }

  func testOpenAICompatibleModel_takesTheSameCredentials() async throws {
    let key = "sk-test-0123456789"
    let stub = try OpenAITestServers.stub(apiKey: key)
    defer { stub.stop() }
    let script = TokenScript(["stale-token", key])
    let model = OpenAICompatibleModel(
      name: "echo", baseURL: stub.openAIBaseURL, apiKey: nil, authorization: script.credential,
      requestOptions: .fastTests, requiresAPIKey: true, logHandler: .silent)
    XCTAssertEqual(model.availability, .available, "a bearer credential satisfies requiresAPIKey")
    let answer = try await model.respond(to: Self.prompt("hi"))
    XCTAssertFalse(answer.text.isEmpty)
    XCTAssertEqual(script.calls, 2, "the stub's 401 made the provider be asked once more")
    XCTAssertFalse(model.description.contains(key))
  }
}
