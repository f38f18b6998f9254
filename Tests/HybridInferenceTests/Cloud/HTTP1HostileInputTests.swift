import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The nastiest replies a server can send the HTTP/1.1 client, end to end
/// through `HTTPTransport` over a real socket, each in a child process so a
/// trap (an overflow, an allocation sized by the server) fails the parent
/// instead of killing it: every one ends in a `URLError`, a
/// `TransportFailure` (a malformed response) or a bounded answer, and the
/// client then answers a sane request on the same origin.
final class HTTP1HostileInputTests: XCTestCase {
  private static let replies: [String] = [
    // Numbers at and past the edges of Int.
    "HTTP/1.1 200 OK\r\nContent-Length: -9223372036854775808\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7FFFFFFFFFFFFFFF\r\nabc",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "F", count: 10_000) + "\r\n",
    "HTTP/1.1 -9223372036854775808 X\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 99999999999999999999 X\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=-9223372036854775808\r\nContent-Length: 2\r\n\r\nok",
    "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=99999999999999999999999\r\nContent-Length: 2\r\n\r\nok",
    "HTTP/1.1 200 OK\r\nRetry-After: " + String(repeating: "9", count: 10_000) + "\r\nContent-Length: 2\r\n\r\nok",
    // Heads that never end, or end only after the limits.
    "HTTP/1.1 200 OK\r\n" + String(repeating: "X: y\r\n", count: 100_000),
    "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 1 << 20),
    String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 50_000),
    // A redirect to itself, forever (same origin, so it is followed until the cap).
    "HTTP/1.1 307 Temporary Redirect\r\nLocation: /hostile/13\r\nContent-Length: 0\r\n\r\n",
    String(repeating: "\0", count: 70_000),
  ]

  func testHostileReplies_endInURLErrorsOrBoundedAnswers_andTheClientGoesOn() async throws {
    try await ChildProcess.assertPasses(self) {
      let server = try ScriptedHTTPServer { connection, _, head in
        if head.hasPrefix("GET /sane") { return .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        let index = Int(head.split(separator: " ")[1].dropFirst("/hostile/".count)) ?? 0
        return .send(Self.replies[min(index, Self.replies.count - 1)], close: true)
      }
      defer { server.stop() }
      let transport = HTTPTransport()
      for index in Self.replies.indices {
        let body = try await Self.body(transport, try server.url("/hostile/\(index)"))
        // An answer is fine (the bounded ones); a body is never larger than what was sent.
        if case .success(let data) = body { XCTAssertLessThanOrEqual(data.count, 3, "reply \(index)") }
        if case .failure(let error) = body {
          XCTAssertTrue(error is URLError || error is TransportFailure, "reply \(index): \(error)")
        }
      }
      let sane = try await Self.body(transport, try server.url("/sane"))
      XCTAssertEqual(try sane.get(), Data("ok".utf8))
    }
  }

  private static func body(_ transport: HTTPTransport, _ url: URL) async throws -> Result<Data, any Error> {
    let exchange = transport.exchange(URLRequest(url: url), connectTimeout: .seconds(5), deadline: .now + .seconds(20))
    defer { exchange.cancel() }
    var data = Data()
    do {
      for try await event in exchange.events {
        if case .body(let bytes) = event { data += bytes }
      }
      return .success(data)
    } catch {
      return .failure(error)
    }
  }
}
