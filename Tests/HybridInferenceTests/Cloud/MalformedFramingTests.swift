import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A server that answers with broken HTTP framing answered: the library
/// reports `malformedResponse`, never a lost connection or offline, so a
/// prefer-cloud hybrid does not fall back on it (not even one that falls
/// back on lost connections), a stream broken that way is not continued on
/// the device, and the origin is not remembered as unreachable.
final class MalformedFramingTests: XCTestCase {
  /// Replies whose framing no HTTP/1.1 client can read, one of each kind.
  static let framings: [(name: String, reply: String)] = [
    ("chunk size not hex", chunked("zz\r\nok\r\n0\r\n\r\n")),
    ("chunk size overflow", chunked("FFFFFFFFFFFFFFFFFFFFF\r\nok\r\n0\r\n\r\n")),
    ("chunk data without CRLF", chunked("2\r\nokXX0\r\n\r\n")),
    ("conflicting Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"),
    ("Content-Length with garbage", "HTTP/1.1 200 OK\r\nContent-Length: 2abc\r\n\r\nok"),
    (
      "Transfer-Encoding and Content-Length",
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    ),
    ("Transfer-Encoding not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok"),
    ("bad status line", "HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok"),
    ("not HTTP at all", "SSH-2.0-OpenSSH_9.2\r\n\r\n"),
    ("header folded", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\nok"),
    (
      "too many header fields",
      "HTTP/1.1 200 OK\r\n" + String(repeating: "X: y\r\n", count: HTTP1Limits.maximumHeaderFields + 1)
        + "Content-Length: 2\r\n\r\nok"
    ),
    (
      "head too large",
      "HTTP/1.1 200 OK\r\n" + String(repeating: "X: \(String(repeating: "y", count: 8000))\r\n", count: 9)
        + "Content-Length: 2\r\n\r\nok"
    ),
    ("unrequested upgrade", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"),
  ]

  private static func chunked(_ body: String) -> String {
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + body
  }

  /// A prefer-cloud hybrid whose cloud is an OpenAI-compatible model on
  /// `server`, falling back on lost connections too; its device half is
  /// scripted, and is never to be asked.
  private static func hybrid(
    _ server: ScriptedHTTPServer, transport: RequestOptions.Transport = .automatic,
    fallback: FallbackPolicy = .default.adding(.connectionLost)
  ) throws -> (GenerativeModelSession, ScriptedModel) {
    let cloud = OpenAICompatibleModel(
      name: "m", baseURL: try server.url("/v1"), apiKey: nil,
      requestOptions: RequestOptions(timeout: .seconds(20), retryPolicy: .none, transport: transport),
      logHandler: .silent)
    let local = ScriptedModel("local", placement: .onDevice, script: [.answer(["from the device"])])
    let session = GenerativeModelSession(
      model: .hybridModel(primary: cloud, secondary: local, fallback: fallback), logHandler: .silent)
    return (session, local)
  }

  private static func assertMalformed(
    _ error: (any Error)?, _ name: String, file: StaticString = #filePath, line: UInt = #line
  ) {
    guard case .malformedResponse? = error as? HybridInferenceError else {
      return XCTFail("\(name): expected .malformedResponse, got \(String(describing: error))", file: file, line: line)
    }
  }

  func testMalformedFraming_isMalformedResponse_andAPreferCloudHybridDoesNotFallBack() async throws {
    for (name, reply) in Self.framings {
      let server = try ScriptedHTTPServer { _, _, _ in .send(reply, close: true) }
      defer { server.stop() }
      let (session, local) = try Self.hybrid(server)
      let error = await captureError { try await session.respond(to: "hi") }
      Self.assertMalformed(error, name)
      XCTAssertTrue(local.requests.isEmpty, "\(name): the device was asked")
      let origin = try XCTUnwrap(Origin(try server.url()))
      XCTAssertNil(ReachabilityMemory.shared.verdict(for: origin), "\(name): remembered as offline")
    }
  }

  func testAStatusLineThatIsNotHTTP_throughURLSession_isMalformedResponse_notInvalidOptions() async throws {
    // libcurl reports it as `unsupportedURL`, which otherwise reads as a
    // base URL the library cannot use. (Broken framing after the head
    // reaches URLSession's caller as `networkConnectionLost`, the code of a
    // body cut short: that one cannot be told apart, and stays
    // `connectionLost`.)
    for name in ["bad status line", "not HTTP at all"] {
      let reply = try XCTUnwrap(Self.framings.first { $0.name == name }?.reply)
      let server = try ScriptedHTTPServer { _, _, _ in .send(reply, close: true) }
      defer { server.stop() }
      let (session, local) = try Self.hybrid(server, transport: .urlSession)
      let error = await captureError { try await session.respond(to: "hi") }
      Self.assertMalformed(error, name)
      XCTAssertTrue(local.requests.isEmpty, "\(name): the device was asked")
    }
  }

  func testAStreamWhoseFramingBreaksAfterText_isMalformed_andNotContinuedOnTheDevice() async throws {
    // The first event arrives whole, then a chunk size that is not a number.
    let event =
      #"data: {"id":"1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"#
      + #""delta":{"content":"Hello"},"finish_reason":null}]}"# + "\n\n"
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    let first = String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n"
    let server = try ScriptedHTTPServer { _, _, _ in .sendParts([head + first, "not-a-size\r\n"]) }
    defer { server.stop() }
    let (session, local) = try Self.hybrid(server, fallback: .default)
    let (snapshots, error) = await collectSnapshots(session.streamResponse(to: "hi"))
    XCTAssertEqual(snapshots.last?.content, "Hello")
    Self.assertMalformed(error, "stream")
    XCTAssertTrue(local.requests.isEmpty, "a malformed stream is not a lost connection to continue from")
  }
}
