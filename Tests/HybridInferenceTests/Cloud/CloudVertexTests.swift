import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Gemini on Vertex AI: the host per location, the
/// project and location from the environment, the Vertex paths and headers
/// against the loopback server, and no Gemini API key ever sent there.
final class CloudVertexTests: CloudTestCase {
  private let project = "proj-SECRET-42"
  private let token: Credential = .bearerToken { "ya29.valid-vertex" }

  private func vertex(
    _ name: String, project: String? = "proj-SECRET-42", location: String? = "us-central1",
    apiKey: String? = nil, authorization: Credential?, baseURL: URL? = nil,
    environment: [String: String] = [:]
  ) -> CloudGeminiModel {
    CloudGeminiModel(
      name: name, apiKey: apiKey, baseURL: baseURL ?? server.baseURL,
      backend: .vertexAI(project: project, location: location), authorization: authorization,
      requestOptions: .fastTests, logHandler: .silent, environment: environment)
  }

  func testTheDesignSnippet_compilesAndIsAvailable() {
    // The third contract snippet's Vertex lines, as written.
    let vertex = CloudGeminiModel(
      name: "gemini-3.1-flash-lite",
      backend: .vertexAI(project: "my-project", location: "global"),
      authorization: .bearerToken { "ya29.token-from-your-provider" },
      serverTools: [.googleSearch(), .codeExecution(), .urlContext()])
    XCTAssertEqual(vertex.availability, .available)
    if ProcessInfo.processInfo.environment["GOOGLE_VERTEX_BASE_URL"] == nil {
      XCTAssertEqual(vertex.baseURL.host, "aiplatform.googleapis.com")
    }
    XCTAssertEqual(vertex.serverTools.map(\.description), ["googleSearch", "codeExecution", "urlContext"])
  }

  func testHostAndVersionPerLocation_andTheEnvironmentFallbacks() throws {
    func model(_ backend: GeminiBackend, _ environment: [String: String] = [:]) -> CloudGeminiModel {
      CloudGeminiModel(name: "gemini-3.1-flash-lite", backend: backend, authorization: token, environment: environment)
    }
    let global = model(.vertexAI(project: "p"))
    XCTAssertEqual(global.baseURL.absoluteString, "https://aiplatform.googleapis.com")
    XCTAssertEqual(global.apiVersion, "v1")
    XCTAssertEqual(
      try global.client.endpoint.url(for: .generateContent).absoluteString,
      "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/"
        + "gemini-3.1-flash-lite:generateContent")
    let regional = model(.vertexAI(project: "p", location: "europe-west4"))
    XCTAssertEqual(regional.baseURL.absoluteString, "https://europe-west4-aiplatform.googleapis.com")
    XCTAssertEqual(
      try regional.client.endpoint.url(for: .streamGenerateContent).absoluteString,
      "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google/"
        + "models/gemini-3.1-flash-lite:streamGenerateContent?alt=sse")
    XCTAssertEqual(
      try regional.client.endpoint.url(for: .countTokens).path,
      "/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-3.1-flash-lite:countTokens")

    // Not given: GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION; given wins.
    let environment = ["GOOGLE_CLOUD_PROJECT": "env-project", "GOOGLE_CLOUD_LOCATION": "asia-northeast1"]
    let fromEnvironment = model(.vertexAI(), environment)
    XCTAssertEqual(fromEnvironment.availability, .available)
    XCTAssertEqual(fromEnvironment.baseURL.host, "asia-northeast1-aiplatform.googleapis.com")
    XCTAssertEqual(
      fromEnvironment.client.endpoint.modelPath.hasPrefix("projects/env-project/locations/asia-northeast1/"), true)
    let given = model(.vertexAI(project: "mine", location: "us-east5"), environment)
    XCTAssertEqual(
      given.client.endpoint.modelPath, "projects/mine/locations/us-east5/publishers/google/models/gemini-3.1-flash-lite"
    )
    XCTAssertEqual(
      model(.vertexAI(project: "p"), ["GOOGLE_VERTEX_BASE_URL": "https://proxy.example"]).baseURL.host, "proxy.example")

    XCTAssertEqual(model(.vertexAI()).availability, .unavailable(.missingProject))
    XCTAssertEqual(
      model(.vertexAI(project: "p", location: "us central1/x")).availability, .unavailable(.invalidBaseURL))
    // The Gemini API is unchanged: v1beta on Google's host.
    let gemini = CloudGeminiModel(name: "m", apiKey: "k", environment: [:])
    XCTAssertEqual(gemini.apiVersion, "v1beta")
    XCTAssertEqual(gemini.baseURL, CloudGeminiModel.defaultBaseURL)
  }

  func testUnaryStreamAndCount_speakTheVertexPathsWithBearerAndUserProject() async throws {
    let name = "echo~\(uniqueID())"
    let model = vertex(name, authorization: token)
    let session = GenerativeModelSession(model: model, instructions: "Be brief.", logHandler: .silent)
    let answer = try await session.respond(to: "hello")
    XCTAssertEqual(answer.content, "echo: hello")
    // The producer (kept in transcripts) names the location and model, not the project.
    XCTAssertEqual(
      answer.rawResponse.producer,
      "\(server.baseURL.absoluteString)/v1/locations/us-central1/publishers/google/models/\(name)")
    let streamed = await collectSnapshots(session.streamResponse(to: "again"))
    XCTAssertNil(streamed.error)
    XCTAssertEqual(streamed.snapshots.last?.content, "echo: again")
    let count = try await model.countTokens(Transcript(instructions: "Be brief.", entries: [.prompt("one two three")]))
    XCTAssertEqual(count, 5)

    let requests = try await server.allRequests(name)
    XCTAssertEqual(
      requests.map { $0["method"] as? String }, ["generateContent", "streamGenerateContent", "countTokens"])
    for request in requests {
      let path = try XCTUnwrap(request["path"] as? String)
      XCTAssertTrue(
        path.hasPrefix("/v1/projects/\(project)/locations/us-central1/publishers/google/models/echo~"), path)
      XCTAssertEqual(request["bearer"] as? String, "ya29.valid-vertex")
      XCTAssertEqual(request["keyHeaderPresent"] as? Bool, false)
      let headers = try XCTUnwrap(request["headers"] as? [String: String])
      XCTAssertEqual(headers["x-goog-user-project"], project)
    }
    XCTAssertEqual(requests[1]["query"] as? String, "alt=sse")
    // Vertex's countTokens form: contents and systemInstruction side by side.
    let countBody = try XCTUnwrap(requests[2]["body"] as? [String: Any])
    XCTAssertEqual(Set(countBody.keys), ["contents", "systemInstruction"])
  }

  func testAGeminiAPIKeyIsNeverSentToVertex() async throws {
    let key = GeminiTestServer.apiKey
    let environment = ["GEMINI_API_KEY": key, "GOOGLE_API_KEY": key]
    let name = "echo~\(uniqueID())"
    // A key from the parameter, the environment, or even as the credential: no credential on Vertex.
    for authorization in [nil, Credential.apiKey(key)] {
      let model = vertex(name, apiKey: key, authorization: authorization, environment: environment)
      XCTAssertEqual(model.availability, .unavailable(.missingCredential))
      let error = await captureError {
        try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "hi")
      }
      guard case .unavailable(_, .missingCredential)? = error as? HybridInferenceError else {
        return XCTFail("\(String(describing: error))")
      }
      let streamed = await collectSnapshots(
        GenerativeModelSession(model: model, logHandler: .silent).streamResponse(to: "hi"))
      XCTAssertNotNil(streamed.error)
    }
    let arrived = try await server.requestCount(name)
    XCTAssertEqual(arrived, 0)
    // With a token, the key still stays home.
    _ = try await vertex(name, apiKey: key, authorization: token, environment: environment).respond(
      to: ModelRequest(transcript: Transcript(entries: [.prompt("hi")])))
    let request = try await server.lastRequest(name)
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, false)
    XCTAssertEqual(request["bearer"] as? String, "ya29.valid-vertex")
  }

  func testNeitherTheProjectNorTheTokenShows_inDescriptionsErrorsOrLogs() async throws {
    let logs = CloudLogRecorder()
    let model = CloudGeminiModel(
      name: "fault-500~times-9", baseURL: server.baseURL, backend: .vertexAI(project: project),
      authorization: .bearerToken { "ya29.valid-SECRET-token" }, requestOptions: .fastTests,
      logHandler: logs.handler, environment: [:])
    var renderings = [
      model.description, model.debugDescription, String(reflecting: model), "\(model.backend)",
    ]
    var dumped = ""
    dump(model, to: &dumped)
    renderings.append(dumped)
    XCTAssertTrue(model.description.contains("aiplatform") || model.description.contains("127.0.0.1"))
    XCTAssertTrue(model.description.contains("bearer token provider"), model.description)
    let session = GenerativeModelSession(model: model, logHandler: logs.handler)
    if let error = await captureError({ try await session.respond(to: "hi") }) {
      renderings += [String(describing: error), error.localizedDescription]
    }
    XCTAssertFalse(logs.records.isEmpty, "the retries were logged")
    renderings += logs.records.map(\.message)
    for text in renderings {
      XCTAssertFalse(text.contains("SECRET"), text)
    }
  }
  /// The project goes into the URL path and the `x-goog-user-project`
  /// header: one with a slash, a dot-dot, a space or a line break (which
  /// could walk the path elsewhere or add headers of its own) is refused
  /// before anything is sent, and the error does not quote it.
  func testAProjectThatIsNotAnID_isRefusedBeforeSending_withoutQuotingIt() async throws {
    let name = "echo~\(uniqueID())"
    for bad in ["SECRET/../../x", "SECRET\r\nX-Injected: 1", "..", "SECRET id", "-SECRET"] {
      let model = vertex(name, project: bad, authorization: token)
      let error = await captureError {
        try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "hi")
      }
      guard case .invalidOptions(let why)? = error as? HybridInferenceError else {
        XCTFail("\(bad.debugDescription): \(String(describing: error))")
        continue
      }
      XCTAssertFalse(why.contains("SECRET"), why)
      let streamed = await collectSnapshots(
        GenerativeModelSession(model: model, logHandler: .silent).streamResponse(to: "hi"))
      XCTAssertNotNil(streamed.error)
    }
    let arrived = try await server.requestCount(name)
    XCTAssertEqual(arrived, 0)
    // A domain-scoped project (`example.com:p`) and a project number are ids.
    for good in ["example.com:proj", "123456789012"] {
      XCTAssertNoThrow(try vertex(name, project: good, authorization: token).client.endpoint.url(for: .generateContent))
    }
  }
  /// A request that cannot connect fails with the URLSession's `URLError`,
  /// whose failing URL would carry the project path: it keeps only the
  /// scheme, host and port, wherever an app prints or dumps it.
  func testAnUnreachableServersError_doesNotCarryTheProjectPath() async throws {
    let closed = try closedLoopbackPort()
    let model = vertex(
      "m", authorization: token, baseURL: try XCTUnwrap(URL(string: "http://127.0.0.1:\(closed)")))
    let error = await captureError {
      try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "hi")
    }
    guard case .offline(let underlying)? = error as? HybridInferenceError else {
      return XCTFail("\(String(describing: error))")
    }
    let urlError = underlying
    XCTAssertEqual(urlError.failingURL?.host, "127.0.0.1")
    XCTAssertEqual(urlError.failingURL?.port, closed)
    XCTAssertEqual(
      urlError.userInfo["NSErrorFailingURLStringKey"] as? String, "http://127.0.0.1:\(closed)",
      "the string form (what URLError.failureURLString reads) is the origin too")
    var dumped = ""
    dump(error, to: &dumped)
    for text in [
      dumped, String(describing: urlError), String(reflecting: urlError), "\(urlError.userInfo)",
      urlError.localizedDescription,
    ] {
      XCTAssertFalse(text.contains("SECRET"), text)
    }
  }
}
