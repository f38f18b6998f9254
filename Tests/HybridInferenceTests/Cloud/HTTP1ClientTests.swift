import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// The HTTP/1.1 client through `HTTPTransport`, against a scripted server:
/// keep-alive reuse, the connection limit, the stale-connection retry,
/// cancellation, IPv6, redirects and hostile responses.
final class HTTP1ClientTests: XCTestCase {
  private static let ok = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"

  private struct Outcome: Sendable {
    var connectedEvents = 0
    var head: ResponseHead?
    var body = Data()
    var error: (any Error)?
  }

  private static func run(
    _ transport: HTTPTransport, _ url: URL, method: String = "GET", body: Data? = nil,
    deadline: Duration = .seconds(10)
  ) async -> Outcome {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.httpBody = body
    let exchange = transport.exchange(request, connectTimeout: .seconds(5), deadline: .now + deadline)
    defer { exchange.cancel() }
    var outcome = Outcome()
    do {
      for try await event in exchange.events {
        switch event {
        case .connected: outcome.connectedEvents += 1
        case .head(let head): outcome.head = head
        case .body(let data): outcome.body += data
        }
      }
    } catch {
      outcome.error = error
    }
    return outcome
  }

  func testKeepAlive_reusesOneConnection_andCloseOpensANewOne() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .send(Self.ok) }
    defer { server.stop() }
    let transport = HTTPTransport()
    for _ in 0..<5 {
      let outcome = await Self.run(transport, try server.url())
      XCTAssertNil(outcome.error)
      XCTAssertEqual(outcome.head?.statusCode, 200)
      XCTAssertEqual(outcome.head?.contentType, "text/plain")
      XCTAssertEqual(outcome.body, Data("ok".utf8))
      XCTAssertEqual(outcome.connectedEvents, 1)
    }
    XCTAssertEqual(server.stats.withLock(\.connections), 1, "one keep-alive connection for five requests")

    let closing = try ScriptedHTTPServer { _, _, _ in
      .send("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
    }
    defer { closing.stop() }
    for _ in 0..<3 { _ = await Self.run(transport, try closing.url()) }
    XCTAssertEqual(closing.stats.withLock(\.connections), 3)
  }

  func testStaleReusedConnection_isRetriedOnceOnANewOne_forAGET_withoutASecondConnectedEvent() async throws {
    // The first connection answers once, then closes when the second request
    // arrives (as a server does whose idle timer fired as it went out). A
    // GET may go again: it runs nothing.
    let server = try ScriptedHTTPServer { connection, request, _ in
      connection == 0 && request == 1 ? .close : .send(Self.ok)
    }
    defer { server.stop() }
    let transport = HTTPTransport()
    _ = await Self.run(transport, try server.url())
    let second = await Self.run(transport, try server.url())
    XCTAssertNil(second.error)
    XCTAssertEqual(second.body, Data("ok".utf8))
    XCTAssertEqual(second.connectedEvents, 1)
    XCTAssertEqual(server.stats.withLock(\.connections), 2)
    XCTAssertEqual(server.stats.withLock(\.requests).count, 3)
  }

  func testAPOSTOnAReusedConnectionClosedAfterTheServerReadIt_isNotSentAgain() async throws {
    let server = try ScriptedHTTPServer { connection, request, _ in
      connection == 0 && request == 1 ? .close : .send(Self.ok)
    }
    defer { server.stop() }
    let transport = HTTPTransport()
    _ = await Self.run(transport, try server.url())
    let second = await Self.run(transport, try server.url(), method: "POST", body: Data("{}".utf8))
    XCTAssertEqual((second.error as? URLError)?.code, .badServerResponse)
    XCTAssertEqual(second.connectedEvents, 1, "connected: the request went out")
    XCTAssertEqual(server.stats.withLock(\.connections), 1)
    XCTAssertEqual(server.stats.withLock(\.requests).count, 2, "a generation is never sent twice")
  }

  func testAFreshConnectionClosedBeforeAnswering_isNotRetried() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .close }
    defer { server.stop() }
    let outcome = await Self.run(HTTPTransport(), try server.url(), method: "POST", body: Data("{}".utf8))
    XCTAssertEqual((outcome.error as? URLError)?.code, .badServerResponse)
    XCTAssertEqual(outcome.connectedEvents, 1)
    XCTAssertEqual(server.stats.withLock(\.requests).count, 1, "a generation is never sent twice")
  }

  func testConnectionLimit_holdsAndQueuedRequestsAllComplete() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in
      Thread.sleep(forTimeInterval: 0.05)
      return .send(Self.ok)
    }
    defer { server.stop() }
    let transport = HTTPTransport(maximumConnectionsPerHost: 3)
    let url = try server.url()
    let outcomes = await withTaskGroup(of: Outcome.self) { group in
      for _ in 0..<12 { group.addTask { await Self.run(transport, url) } }
      return await group.reduce(into: []) { $0.append($1) }
    }
    XCTAssertEqual(outcomes.filter { $0.body == Data("ok".utf8) }.count, 12)
    XCTAssertLessThanOrEqual(server.stats.withLock(\.mostOpen), 3)
    XCTAssertLessThanOrEqual(server.stats.withLock(\.connections), 3)
  }

  /// A server with two HTTP threads that each keep an idle keep-alive
  /// connection for 3 s (cpp-httplib's pool, llama-server's): a burst of six
  /// on new connections is answered without a thread ever waiting out an
  /// idle connection, because the client closes connections it would keep
  /// idle while others still wait for their first byte. Before, the first
  /// two answered connections sat idle in the pool and held both threads for
  /// their 3 s, twice (`idleDrops` 4, the burst ~6 s).
  func testABurstAgainstAServerWithFewThreads_doesNotHoldItsThreadsWithIdleConnections() async throws {
    let server = try ScriptedHTTPServer(workers: 2, idleHold: .seconds(3)) { _, _, _ in .send(Self.ok) }
    defer { server.stop() }
    let transport = HTTPTransport(maximumConnectionsPerHost: 32)
    let url = try server.url()
    let outcomes = await withTaskGroup(of: Outcome.self) { group in
      for _ in 0..<6 { group.addTask { await Self.run(transport, url, deadline: .seconds(20)) } }
      return await group.reduce(into: []) { $0.append($1) }
    }
    XCTAssertEqual(outcomes.filter { $0.body == Data("ok".utf8) }.count, 6)
    XCTAssertEqual(server.stats.withLock(\.idleDrops), 0, "a server thread waited out an idle connection")
    // Once every connection has been answered, keep-alive holds again.
    let again = await Self.run(transport, url)
    XCTAssertEqual(again.body, Data("ok".utf8))
  }

  /// A server that keeps requests in a queue of its own (llama-server's
  /// slots): every request's first byte comes late, on new connections and
  /// reused ones alike, so the rule above must not close a connection its
  /// caller takes again at once. Before, each release while another
  /// caller's new connection still waited was a close, that caller's next
  /// request opened a new connection, which kept the rule true for the
  /// others: four callers of ten requests in a row opened 40 connections
  /// (one per request, each left in TIME_WAIT).
  func testCallersInARow_againstAServerThatQueues_keepTheirConnections() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in
      Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.04))
      return .send(Self.ok)
    }
    defer { server.stop() }
    let transport = HTTPTransport(maximumConnectionsPerHost: 32)
    let url = try server.url()
    let answered = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<4 {
        group.addTask {
          var answered = 0
          for _ in 0..<10 {
            if await Self.run(transport, url).body == Data("ok".utf8) { answered += 1 }
          }
          return answered
        }
      }
      return await group.reduce(0, +)
    }
    XCTAssertEqual(answered, 40)
    XCTAssertLessThanOrEqual(server.stats.withLock(\.connections), 6, "warm callers opened a connection per request")
  }

  func testCancellingAStalledBody_closesTheSocketAtOnce() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in
      .sendAndHold("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart")
    }
    defer { server.stop() }
    let transport = HTTPTransport()
    var request = URLRequest(url: try server.url())
    request.httpMethod = "GET"
    let exchange = transport.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(30))
    for try await event in exchange.events {
      if case .body = event { break }
    }
    let start = ContinuousClock.now
    exchange.cancel()
    XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(100), "cancel does not wait")
    for _ in 0..<100 where server.stats.withLock(\.hangUpsSeen) == 0 {
      try await Task.sleep(for: .milliseconds(20))
    }
    XCTAssertEqual(server.stats.withLock(\.hangUpsSeen), 1, "the server saw the client hang up")
  }

  func testDeadline_afterConnecting_isDeadlineExceeded() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .sendAndHold("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n") }
    defer { server.stop() }
    let outcome = await Self.run(HTTPTransport(), try server.url(), deadline: .milliseconds(300))
    XCTAssertEqual(outcome.error as? TransportFailure, .deadlineExceeded)
  }

  func testRefusedAndUnknownHosts_areTheURLSessionCodes() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .close }
    let url = try server.url()
    server.stop()
    let refused = await Self.run(HTTPTransport(), url)
    XCTAssertEqual((refused.error as? URLError)?.code, .cannotConnectToHost)
    XCTAssertEqual(refused.connectedEvents, 0)
    XCTAssertEqual((refused.error as? URLError)?.failingURL?.path, "", "the failing URL is the origin only")
    let unknown = await Self.run(HTTPTransport(), try XCTUnwrap(URL(string: "http://no-such-host.invalid/")))
    XCTAssertEqual((unknown.error as? URLError)?.code, .cannotFindHost)
  }

  func testIPv6Loopback() async throws {
    let server = try ScriptedHTTPServer(ipv6: true) { _, _, _ in .send(Self.ok) }
    defer { server.stop() }
    let outcome = await Self.run(HTTPTransport(), try server.url(host: "[::1]"))
    XCTAssertNil(outcome.error)
    XCTAssertEqual(outcome.body, Data("ok".utf8))
  }

  func testRedirects_sameOriginFollowed303AsGET_otherOriginRefused_loopsEnd() async throws {
    let server = try ScriptedHTTPServer { _, _, head in
      if head.hasPrefix("POST /start") {
        return .send("HTTP/1.1 303 See Other\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n")
      }
      if head.hasPrefix("GET /next") { return .send(Self.ok) }
      if head.hasPrefix("GET /away") {
        return .send("HTTP/1.1 302 Found\r\nLocation: http://example.com/\r\nContent-Length: 0\r\n\r\n")
      }
      if head.hasPrefix("GET /ftp") {
        return .send("HTTP/1.1 302 Found\r\nLocation: ftp://x/\r\nContent-Length: 0\r\n\r\n")
      }
      return .send("HTTP/1.1 307 Again\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n")
    }
    defer { server.stop() }
    let transport = HTTPTransport()
    let followed = await Self.run(transport, try server.url("/start"), method: "POST", body: Data("{}".utf8))
    XCTAssertEqual(followed.body, Data("ok".utf8))
    XCTAssertEqual(followed.connectedEvents, 1)
    let away = await Self.run(transport, try server.url("/away"))
    guard case .redirectRefused? = away.error as? TransportFailure else {
      return XCTFail("\(String(describing: away.error))")
    }
    let ftp = await Self.run(transport, try server.url("/ftp"))
    XCTAssertEqual((ftp.error as? URLError)?.code, .unsupportedURL)
    let loop = await Self.run(transport, try server.url("/loop"))
    XCTAssertEqual((loop.error as? URLError)?.code, .httpTooManyRedirects)
    let never = HTTPTransport(redirectPolicy: .never)
    let refused = await Self.run(never, try server.url("/start"), method: "POST")
    guard case .redirectRefused? = refused.error as? TransportFailure else {
      return XCTFail("\(String(describing: refused.error))")
    }
  }

  func testHostileResponses_endInTypedErrors_andChunkedBodiesArrive() async throws {
    enum Expected {
      case body
      case malformed(HTTP1ParseError)
      case url(URLError.Code)
    }
    let replies: [(String, Expected)] = [
      ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", .body),
      ("HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nok", .malformed(.invalidContentLength)),
      ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFF\r\n", .malformed(.invalidChunkSize)),
      ("NOT HTTP AT ALL\r\n\r\n", .malformed(.malformedStatusLine)),
      ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", .url(.networkConnectionLost)),
    ]
    for (reply, expected) in replies {
      let server = try ScriptedHTTPServer { _, _, _ in .send(reply, close: true) }
      defer { server.stop() }
      let outcome = await Self.run(HTTPTransport(), try server.url())
      switch expected {
      case .body:
        XCTAssertNil(outcome.error, reply)
        XCTAssertEqual(outcome.body, Data("ok".utf8))
      case .malformed(let parse):
        XCTAssertEqual(outcome.error as? TransportFailure, .malformedResponse(reason: parse.reason), reply)
      case .url(let code):
        XCTAssertEqual((outcome.error as? URLError)?.code, code, reply)
      }
    }
  }

  func testAProxyInTheEnvironment_sendsThePlainHTTPRequestThroughURLSessionAndTheProxy() async throws {
    let server = try ScriptedHTTPServer { _, _, _ in .send(Self.ok) }
    defer { server.stop() }
    let proxy = try ScriptedHTTPServer { _, _, _ in
      .send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nproxy")
    }
    defer { proxy.stop() }
    setenv("http_proxy", "http://127.0.0.1:\(proxy.port)", 1)
    defer { unsetenv("http_proxy") }
    let transport = HTTPTransport()
    let outcome = await Self.run(transport, try server.url())
    XCTAssertEqual(outcome.body, Data("proxy".utf8), "libcurl sent it to the proxy")
    XCTAssertEqual(server.stats.withLock(\.connections), 0)
    setenv("no_proxy", "127.0.0.1", 1)
    defer { unsetenv("no_proxy") }
    let direct = await Self.run(transport, try server.url())
    XCTAssertEqual(direct.body, Data("ok".utf8), "no_proxy matches: the library's client, straight to the server")
  }

  func testURLSessionOption_andProxiedRequests_stayOnURLSession() throws {
    XCTAssertTrue(
      try XCTUnwrap(HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never)).handles(
        URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:1/")))))
    XCTAssertFalse(
      HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never).handles(
        URLRequest(url: try XCTUnwrap(URL(string: "https://127.0.0.1:1/")))))
    XCTAssertEqual(RequestOptions().transport, .automatic)
  }
}
