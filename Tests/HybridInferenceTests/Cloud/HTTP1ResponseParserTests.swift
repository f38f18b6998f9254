import Foundation
import XCTest

@testable import HybridInferenceRemote

/// The HTTP/1.1 client's response parser on valid and hostile bytes: every
/// malformed head or chunk ends in a typed `HTTP1ParseError`, memory stays
/// within `HTTP1Limits`, and how the bytes are split never changes the result.
final class HTTP1ResponseParserTests: XCTestCase {
  /// Feeds `text` in pieces of `step` bytes, then the end of the stream when
  /// `close` is set; returns the head, the body and whether it ended.
  private func parse(
    _ text: String, step: Int = .max, close: Bool = false, isHeadRequest: Bool = false
  ) throws -> (head: HTTP1ResponseHead?, body: Data, ended: Bool, reusable: Bool) {
    var parser = HTTP1ResponseParser(isHeadRequest: isHeadRequest)
    let bytes = Array(text.utf8)
    var events: [HTTP1ResponseParser.Event] = []
    var start = 0
    while start < bytes.count {
      let end = min(bytes.count, start + min(step, bytes.count))
      events += try parser.feed(bytes[start..<end])
      start = end
    }
    if close { events += try parser.finish() }
    var head: HTTP1ResponseHead?
    var body = Data()
    var ended = false
    for event in events {
      switch event {
      case .head(let value): head = value
      case .body(let data): body += data
      case .end: ended = true
      }
    }
    return (head, body, ended, parser.allowsReuse)
  }

  private func assertRefused(
    _ text: String, _ expected: HTTP1ParseError, close: Bool = false, file: StaticString = #filePath,
    line: UInt = #line
  ) {
    for step in [1, 7, Int.max] {
      XCTAssertThrowsError(try parse(text, step: step, close: close), file: file, line: line) { error in
        XCTAssertEqual(error as? HTTP1ParseError, expected, "step \(step)", file: file, line: line)
      }
    }
  }

  func testContentLengthBody_isDeliveredAndTheConnectionReusable_howeverSplit() throws {
    for step in [1, 2, 5, Int.max] {
      let result = try parse(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello", step: step)
      XCTAssertEqual(result.head?.statusCode, 200)
      XCTAssertEqual(result.head?.value("content-type"), "application/json")
      XCTAssertEqual(result.body, Data("hello".utf8))
      XCTAssertTrue(result.ended)
      XCTAssertTrue(result.reusable)
    }
  }

  func testChunkedBody_withExtensionsAndTrailers_isDecodedHoweverSplit() throws {
    let text =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n1A\r\n"
      + String(repeating: "x", count: 26) + "\r\n0\r\nX-Trailer: yes\r\n\r\n"
    for step in [1, 3, 11, Int.max] {
      let result = try parse(text, step: step)
      XCTAssertEqual(result.body, Data(("hello" + String(repeating: "x", count: 26)).utf8), "step \(step)")
      XCTAssertTrue(result.ended)
      XCTAssertTrue(result.reusable)
    }
  }

  /// Size lines read in place (a whole line in one read) and those gathered
  /// across reads give the same body, and the same limit: a line may fill
  /// `maximumChunkLineBytes`, its CR counted, and not one byte more.
  func testChunkSizeLines_readWholeOrInPieces_keepOneLimit() throws {
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    let tiny = String(repeating: "1\r\nx\r\n", count: 50) + "0\r\n\r\n"
    for step in [1, 2, 3, 4, 5, 6, 7, Int.max] {
      let result = try parse(head + tiny, step: step)
      XCTAssertEqual(result.body, Data(String(repeating: "x", count: 50).utf8), "step \(step)")
      XCTAssertTrue(result.ended)
    }
    let spaces = { String(repeating: " ", count: $0) }
    let fits = head + "1" + spaces(HTTP1Limits.maximumChunkLineBytes - 2) + "\r\nx\r\n0\r\n\r\n"
    for step in [1, 7, Int.max] {
      XCTAssertEqual(try parse(fits, step: step).body, Data("x".utf8), "step \(step)")
    }
    assertRefused(head + "1" + spaces(HTTP1Limits.maximumChunkLineBytes - 1) + "\r\nx\r\n0\r\n\r\n", .lineTooLong)
  }

  func testBareLineFeeds_areAccepted() throws {
    let result = try parse("HTTP/1.1 200 OK\nContent-Length: 2\n\nok")
    XCTAssertEqual(result.body, Data("ok".utf8))
  }

  func testInterimResponses_areSkipped() throws {
    let result = try parse(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
    )
    XCTAssertEqual(result.head?.statusCode, 201)
    XCTAssertTrue(result.ended)
  }

  func testNoBody_forHEAD_204_and304_evenWithAContentLength() throws {
    XCTAssertTrue(try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", isHeadRequest: true).ended)
    XCTAssertTrue(try parse("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n").ended)
    XCTAssertTrue(try parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n").ended)
  }

  func testBodyUntilClose_endsAtTheCloseAndIsNotReusable() throws {
    let open = try parse("HTTP/1.1 200 OK\r\n\r\npartial")
    XCTAssertFalse(open.ended)
    let closed = try parse("HTTP/1.1 200 OK\r\n\r\nall of it", close: true)
    XCTAssertEqual(closed.body, Data("all of it".utf8))
    XCTAssertTrue(closed.ended)
    XCTAssertFalse(closed.reusable)
  }

  func testKeepAliveRules() throws {
    XCTAssertFalse(try parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").reusable)
    XCTAssertFalse(try parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable)
    XCTAssertTrue(try parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").reusable)
    let head = try parse("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n").head
    XCTAssertEqual(head?.keepAliveTimeout, .seconds(5))
    XCTAssertFalse(try parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxEXTRA").reusable, "bytes after the end")
  }

  func testEndOfStream_beforeAnyByte_orInsideTheResponse_isTyped() {
    var empty = HTTP1ResponseParser()
    XCTAssertThrowsError(try empty.finish()) { XCTAssertEqual($0 as? HTTP1ParseError, .closedBeforeResponse) }
    assertRefused("HTTP/1.1 200 OK\r\nContent-Le", .truncated, close: true)
    assertRefused("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", .truncated, close: true)
    assertRefused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", .truncated, close: true)
  }

  func testHostileStatusLines_areRefused() {
    for line in [
      "HTTP/2 200 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 20 OK", "HTTP/1.1 099 Low", "ICY 200 OK", "HTTP/1.1 200\rOK",
      "HTTP/1.1 -20 OK", "HTTP/1.9 200 OK", "HTTP/1.1  200 OK",
    ] {
      assertRefused(line + "\r\n\r\n", .malformedStatusLine)
    }
  }

  func testHostileHeaders_areRefused() {
    assertRefused("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", .malformedHeader)
    assertRefused("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", .malformedHeader)
    assertRefused("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", .malformedHeader)
    assertRefused("HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", .malformedHeader)
    assertRefused("HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", .malformedHeader)
    assertRefused("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", .malformedHeader)
    assertRefused("HTTP/1.1 101 Switching Protocols\r\n\r\n", .unexpectedUpgrade)
  }

  func testContentLength_conflictingOverflowingOrNotANumber_isRefused() {
    for value in ["5, 6", "-1", "+5", "0x10", "99999999999999999999999", "", "5 5"] {
      assertRefused("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n", .invalidContentLength)
    }
    assertRefused("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n", .invalidContentLength)
  }

  /// Optional whitespace around a value is spaces and tabs (RFC 9110
  /// §5.6.3), nothing else: a framing field that a lenient reader takes one
  /// way and a strict one on the path another desynchronises the stream.
  func testFramingFields_trimOnlySpacesAndTabs() throws {
    for space in ["\u{A0}", "\u{2003}", "\u{3000}"] {
      assertRefused("HTTP/1.1 200 OK\r\nContent-Length: \(space)5\r\n\r\nhello", .invalidContentLength)
      assertRefused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\(space)\r\n\r\n", .unsupportedTransferEncoding)
      XCTAssertTrue(try parse("HTTP/1.1 200 OK\r\nConnection: \(space)close\r\nContent-Length: 0\r\n\r\n").reusable)
    }
    for step in [1, 7, Int.max] {
      let response = try parse(
        "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:\t 5 \t\r\nCONNECTION: \tClose\r\n\r\nhello", step: step)
      XCTAssertEqual(response.body, Data("hello".utf8), "step \(step)")
      XCTAssertFalse(response.reusable, "step \(step)")
    }
    let head = try parse("HTTP/1.1 200 OK\r\nkeep-alive: max=9,\tTIMEOUT = 7\r\nContent-Length: 0\r\n\r\n").head
    XCTAssertEqual(head?.keepAliveTimeout, .seconds(7))
    XCTAssertEqual(head?.value("KEEP-ALIVE"), "max=9,\tTIMEOUT = 7")
  }

  func testTransferCodingsOtherThanChunked_areRefused() {
    assertRefused("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferEncoding)
    assertRefused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .unsupportedTransferEncoding)
  }

  func testHostileChunks_areRefused() {
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    assertRefused(head + "FFFFFFFFFFFFFFFFFFFF\r\n", .invalidChunkSize)
    assertRefused(head + "zz\r\n", .invalidChunkSize)
    assertRefused(head + ";ext\r\n", .invalidChunkSize)
    assertRefused(head + "-1\r\n", .invalidChunkSize)
    assertRefused(head + "3\r\nabcX\r\n", .malformedChunk)
    assertRefused(head + "1" + String(repeating: " ", count: HTTP1Limits.maximumChunkLineBytes + 1), .lineTooLong)
    let manyTrailers = (0...HTTP1Limits.maximumHeaderFields).map { "T\($0): x\r\n" }.joined()
    assertRefused(head + "0\r\n" + manyTrailers + "\r\n", .tooManyHeaderFields)
  }

  func testHeadLimits_bytesFieldsAndLines() {
    let fields = (0...HTTP1Limits.maximumHeaderFields).map { "X-\($0): v\r\n" }.joined()
    assertRefused("HTTP/1.1 200 OK\r\n" + fields + "\r\n", .tooManyHeaderFields)
    assertRefused("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: HTTP1Limits.maximumLineBytes), .lineTooLong)
    let wide = (0..<8).map { "X-\($0): " + String(repeating: "a", count: 9000) + "\r\n" }.joined()
    assertRefused("HTTP/1.1 200 OK\r\n" + wide + "\r\n", .headTooLarge)
    // Interim heads count against the same budget: an endless stream of 100s ends.
    let interims = String(
      repeating: "HTTP/1.1 100 Continue\r\n" + String(repeating: "X: y\r\n", count: 100) + "\r\n", count: 200)
    assertRefused(interims, .headTooLarge)
  }
}
