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

/// A request on an idle keep-alive connection is written from the caller's
/// thread, and awaited on the client's poller without a thread of its own:
/// on cores a server's compute keeps busy, a new thread can wait a time
/// slice before it runs, and the request would wait with it
/// (Benchmarks/RESULTS.md, "Remote clients at scale").
final class HTTP1EarlyWriteTests: XCTestCase {
  private static let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)

  func testARequestOnAnIdleConnection_isOnTheWireWhenExchangeReturns() async throws {
    let server = try OneConnectionServer()
    defer { server.close() }
    let transport = HTTPTransport()
    let request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/")))
    // The first request opens the connection (on its exchange thread).
    let opening = transport.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    let firstBody = try await Self.answered(opening, onANewConnectionOf: server)
    XCTAssertEqual(firstBody, Data("ok".utf8))
    for attempt in 0..<20 {
      let exchange = transport.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
      // Loopback delivers a send before it returns: the request is there now.
      XCTAssertTrue(server.hasBytesWaiting, "request \(attempt + 2) was not written by exchange()")
      try server.answerOneRequest()
      let body = try await exchange.body()
      XCTAssertEqual(body, Data("ok".utf8))
    }
    XCTAssertEqual(server.requests, 21)
  }

  /// When the early write fails: the idle connection passes the pool's
  /// check (nothing readable on it) but the caller's write fails. Here our
  /// end can no longer send (shut for writing while idle; the server keeps
  /// its end open, so nothing becomes readable). The exchange's own write
  /// then fails as on any stale connection: it closes it and
  /// sends the request once more on a new connection, which answers.
  func testAnIdleConnectionThatCannotSend_isReplacedOnce() async throws {
    let server = try OneConnectionServer()
    defer { server.close() }
    let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/"))
    let client = HTTP1Client(maximumConnectionsPerHost: 4, redirectPolicy: .never)
    let request = URLRequest(url: url)
    let opening = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    let firstBody = try await Self.answered(opening, onANewConnectionOf: server)
    XCTAssertEqual(firstBody, Data("ok".utf8))
    // The connection is idle in the pool: take it, shut our sending side, give it back.
    let pool = client.pool(for: try XCTUnwrap(Origin(url)))
    let idle = try XCTUnwrap(pool.takeIdle(), "the first request's connection is idle")
    XCTAssertEqual(Glibc.shutdown(idle.descriptor, Int32(SHUT_WR)), 0)
    pool.release(idle, reusable: true)
    XCTAssertTrue(try XCTUnwrap(pool.takeIdle()).isUsableWhenIdle, "it still passes the idle check")
    pool.release(idle, reusable: true)

    let exchange = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    let secondBody = try await Self.answered(exchange, onANewConnectionOf: server)
    XCTAssertEqual(secondBody, Data("ok".utf8), "answered on a new connection")
    XCTAssertEqual(server.requests, 2)
    XCTAssertEqual(server.connections, 2)
  }

  /// The OS refuses the poller's thread after a request went out whole on
  /// an idle connection from the caller's thread: that connection is closed
  /// (the request on it is never answered into a stream nobody reads) and
  /// its slot given back, so with a limit of one the next request opens a
  /// connection and is answered instead of waiting for a slot until its
  /// deadline.
  func testAnEarlyWrittenRequestWhosePollerIsRefused_closesItsConnection_andFreesTheSlot() async throws {
    try await assertRefusedThreadClosesTheConnectionAndFreesTheSlot(body: nil)
  }

  /// The same when the request is too large for the socket to take at
  /// once: the rest is the exchange thread's to write, and that thread is
  /// refused.
  func testAPartlyWrittenRequestWhoseThreadIsRefused_closesItsConnection_andFreesTheSlot() async throws {
    try await assertRefusedThreadClosesTheConnectionAndFreesTheSlot(body: Data(count: 32 << 20))
  }

  private func assertRefusedThreadClosesTheConnectionAndFreesTheSlot(body: Data?) async throws {
    let server = try OneConnectionServer()
    defer { server.close() }
    let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/"))
    // The poller's thread ends as soon as it has nothing to read, so the
    // refused stack below applies to it too.
    let client = HTTP1Client(maximumConnectionsPerHost: 1, redirectPolicy: .never, pollerLinger: .zero)
    let request = URLRequest(url: url)
    let opening = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    let first = try await Self.answered(opening, onANewConnectionOf: server)
    XCTAssertEqual(first, Data("ok".utf8))
    for _ in 0..<1000 where client.poller.isRunning { try await Task.sleep(for: .milliseconds(10)) }
    XCTAssertFalse(client.poller.isRunning, "the poller's thread ended with nothing to read")

    client.stackBytes.withLock { $0 = 1 << 47 }  // past the user address space: refused
    var refusedRequest = request
    if let body {
      refusedRequest.httpMethod = "POST"
      refusedRequest.httpBody = body
    }
    let refused = client.exchange(refusedRequest, connectTimeout: .seconds(5), deadline: .now + .seconds(10))
    XCTAssertTrue(server.hasBytesWaiting, "the request went out early, on the idle connection")
    do {
      _ = try await refused.body()
      XCTFail("an exchange without a thread answered")
    } catch {
      XCTAssertEqual((error as? URLError)?.code, .resourceUnavailable, "\(error)")
    }
    XCTAssertEqual(client.pool(for: try XCTUnwrap(Origin(url))).idleCount, 0, "the connection is not kept")
    XCTAssertTrue(server.peerClosedAfterRequest, "the connection the request went out on was closed")

    client.stackBytes.withLock { $0 = HTTP1Client.threadStackBytes }
    let after = client.exchange(request, connectTimeout: .seconds(5), deadline: .now + .seconds(3))
    let third = try await Self.answered(after, onANewConnectionOf: server)
    XCTAssertEqual(third, Data("ok".utf8), "the slot was freed")
    XCTAssertEqual(server.connections, 2)
  }

  /// `exchange`'s body, once `server` has accepted its connection and answered it.
  private static func answered(
    _ exchange: TransportExchange, onANewConnectionOf server: OneConnectionServer
  ) async throws -> Data {
    async let body = exchange.body()
    try server.accept()
    try server.answerOneRequest()
    return try await body
  }

  /// A listener that answers on its latest connection when told to (an
  /// earlier one stays open until `close`).
  /// `@unchecked Sendable`: used from the test's task only, one call at a time.
  private final class OneConnectionServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private var connection: Int32 = -1
    private var earlier: [Int32] = []
    private(set) var requests = 0
    var connections: Int { earlier.count + (connection >= 0 ? 1 : 0) }

    init() throws {
      let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard bound == 0, listen(listener, 4) == 0 else { throw URLError(.cannotConnectToHost) }
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
      }
      self.listener = listener
      port = Int(UInt16(bigEndian: address.sin_port))
    }

    func accept() throws {
      guard wait(listener, milliseconds: 10_000) else { throw URLError(.timedOut) }
      if connection >= 0 { earlier.append(connection) }
      connection = Glibc.accept(listener, nil, nil)
      guard connection >= 0 else { throw URLError(.cannotConnectToHost) }
    }

    var hasBytesWaiting: Bool { wait(connection, milliseconds: 0) }

    /// Reads one request head (these have no body) and answers 200 "ok".
    func answerOneRequest() throws {
      var head: [UInt8] = []
      var byte: UInt8 = 0
      while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
        guard wait(connection, milliseconds: 10_000), recv(connection, &byte, 1, 0) == 1 else {
          throw URLError(.networkConnectionLost)
        }
        head.append(byte)
      }
      requests += 1
      guard HTTP1EarlyWriteTests.ok.withUnsafeBytes({ send(connection, $0.baseAddress, $0.count, 0) }) > 0 else {
        throw URLError(.networkConnectionLost)
      }
    }

    /// Reads the request waiting on the latest connection, then whether
    /// the client closed it (end of stream within 5 s).
    var peerClosedAfterRequest: Bool {
      var bytes = [UInt8](repeating: 0, count: 4096)
      while wait(connection, milliseconds: 5_000) {
        if recv(connection, &bytes, bytes.count, 0) <= 0 { return true }
      }
      return false
    }

    func close() {
      for descriptor in earlier + [connection] where descriptor >= 0 { Glibc.close(descriptor) }
      Glibc.close(listener)
    }

    private func wait(_ descriptor: Int32, milliseconds: Int32) -> Bool {
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      return poll(&poller, 1, milliseconds) == 1
    }
  }
}
