import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// When the HTTP/1.1 client may send a request again on a new connection
/// after its reused one closed: only when the request provably never
/// reached the server. A generation (a POST) whose connection closes after
/// the server read it is never sent twice, by the client or by the retry
/// loop above it; one whose idle connection the server had closed before
/// it was written goes out once, on a new connection.
final class HTTP1ResendTests: XCTestCase {
  private static let ok = ScriptedAPIReplies.openAIAnswer("ok")

  /// A model on `server` with the default retry policy, so the retry loop
  /// has its say as well as the client.
  private static func model(_ server: ScriptedHTTPServer) throws -> OpenAICompatibleModel {
    OpenAICompatibleModel(
      name: "m", baseURL: try server.url("/v1"), apiKey: nil,
      requestOptions: RequestOptions(timeout: .seconds(20), retryPolicy: RetryPolicy(baseDelay: .milliseconds(1))),
      logHandler: .silent)
  }

  private static func generations(_ server: ScriptedHTTPServer) -> Int {
    server.stats.withLock { $0.requests.filter { $0.hasPrefix("POST /v1/chat/completions") }.count }
  }

  func testAGenerationWhoseReusedConnectionClosesAfterTheServerReadIt_isSentOnce_andIsConnectionLost() async throws {
    // The first connection answers one generation, keeps alive, then reads
    // the whole of the second and closes without a byte of answer (a server
    // that ran it and died, or a proxy's idle timer firing as it went out).
    let server = try ScriptedHTTPServer { connection, request, _ in
      connection == 0 && request == 1 ? .close : .send(Self.ok)
    }
    defer { server.stop() }
    let session = GenerativeModelSession(model: try Self.model(server), logHandler: .silent)
    let first = try await session.respond(to: "one")
    XCTAssertEqual(first.content, "ok")
    let error = await captureError { try await session.respond(to: "two") }
    XCTAssertNotNil(connectionLostError(error), "the request may have reached the server")
    XCTAssertEqual(Self.generations(server), 2, "the second generation reached the server once, never again")
    XCTAssertEqual(server.stats.withLock(\.connections), 1, "no new connection carried it again")
  }

  func testAStreamedGenerationWhoseReusedConnectionClosesAfterTheServerReadIt_isSentOnce() async throws {
    let server = try ScriptedHTTPServer { connection, request, _ in
      connection == 0 && request == 1 ? .close : .send(Self.ok)
    }
    defer { server.stop() }
    let model = try Self.model(server)
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: "one")
    let (snapshots, error) = await collectSnapshots(
      GenerativeModelSession(model: model, logHandler: .silent).streamResponse(to: "two"))
    XCTAssertTrue(snapshots.isEmpty)
    XCTAssertNotNil(connectionLostError(error))
    XCTAssertEqual(Self.generations(server), 2)
  }

  func testAnIdleConnectionTheServerClosedBeforeTheWrite_isReplaced_andTheGenerationSentOnce() async throws {
    // The first connection answers (keep-alive by its head) and the server
    // closes it at once: the close is on the client's socket before the
    // next request is written, so that request provably never reached the
    // server and goes out on a new connection.
    let server = try ScriptedHTTPServer { connection, _, _ in .send(Self.ok, close: connection == 0) }
    defer { server.stop() }
    let session = GenerativeModelSession(model: try Self.model(server), logHandler: .silent)
    _ = try await session.respond(to: "one")
    let closed = ContinuousClock.now + .seconds(10)
    while server.stats.withLock(\.open) > 0, ContinuousClock.now < closed {
      try await Task.sleep(for: .milliseconds(5))
    }
    let second = try await session.respond(to: "two")
    XCTAssertEqual(second.content, "ok")
    XCTAssertEqual(Self.generations(server), 2, "each generation reached the server once")
    XCTAssertEqual(server.stats.withLock(\.connections), 2)
  }

  func testResendRule_byWhatWentOutAndTheMethod() throws {
    var request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:1/v1/chat/completions")))
    request.httpMethod = "POST"
    XCTAssertTrue(HTTP1Exchange.mayResend(request, afterWriting: false), "nothing went out: it never reached")
    XCTAssertFalse(HTTP1Exchange.mayResend(request, afterWriting: true), "a POST that went out may have run")
    for method in ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"] {
      request.httpMethod = method
      XCTAssertTrue(HTTP1Exchange.mayResend(request, afterWriting: true), method)
    }
    request.httpMethod = "PATCH"
    XCTAssertFalse(HTTP1Exchange.mayResend(request, afterWriting: true))
  }
}
