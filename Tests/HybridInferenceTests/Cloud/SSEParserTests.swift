import Foundation
import XCTest

@testable import HybridInference

/// The incremental SSE parser, fed in every way the network can split a body.
final class SSEParserTests: XCTestCase {
  private func parse(_ chunks: [String]) -> [SSEEvent] {
    var parser = SSEParser()
    var events: [SSEEvent] = []
    for chunk in chunks { events += parser.feed(Array(chunk.utf8)) }
    return events + parser.finish()
  }

  private func data(_ events: [SSEEvent]) -> [String] { events.filter(\.hasData).map(\.data) }

  func testLFAndCRLFAndCR_separateEventsAlike() {
    XCTAssertEqual(data(parse(["data: a\n\ndata: b\n\n"])), ["a", "b"])
    XCTAssertEqual(data(parse(["data: a\r\n\r\ndata: b\r\n\r\n"])), ["a", "b"])
    XCTAssertEqual(data(parse(["data: a\r\rdata: b\r\r"])), ["a", "b"])
  }

  func testEverySplitPoint_givesTheSameEvents() {
    let body = "data: {\"x\": \"é😀\"}\r\n\r\n: comment\r\ndata: line1\r\ndata: line2\r\n\r\ndata: tail"
    let whole = parse([body])
    XCTAssertEqual(data(whole), ["{\"x\": \"é😀\"}", "line1\nline2", "tail"])
    let bytes = Array(body.utf8)
    for split in 1..<bytes.count {
      var parser = SSEParser()
      let events =
        parser.feed(bytes[..<split]) + parser.feed(bytes[split...]) + parser.finish()
      XCTAssertEqual(data(events), data(whole), "split at byte \(split)")
    }
    var parser = SSEParser()
    var events: [SSEEvent] = []
    for byte in bytes { events += parser.feed([byte]) }
    events += parser.finish()
    XCTAssertEqual(data(events), data(whole), "one byte at a time")
  }

  func testEventsComeOutAsSoonAsTheirBlankLineArrives() {
    var parser = SSEParser()
    XCTAssertTrue(parser.feed(Array("data: first\r\n".utf8)).isEmpty)
    XCTAssertEqual(data(parser.feed(Array("\r\n".utf8))), ["first"])
    XCTAssertTrue(parser.feed(Array("data: second".utf8)).isEmpty)
    XCTAssertEqual(data(parser.finish()), ["second"], "a trailing event without a blank line")
  }

  func testCommentsFieldsAndBOM() {
    let events = parse(["\u{FEFF}: keep-alive\nevent: update\nid: 7\nretry: 100\ndata:no-space\ndata\n\n"])
    XCTAssertEqual(events.count, 1)
    XCTAssertEqual(events.first?.type, "update")
    XCTAssertEqual(events.first?.data, "no-space\n")
    XCTAssertEqual(events.first?.otherLines, [])
    XCTAssertTrue(parse([": only a comment\n\n"]).isEmpty)
  }

  func testBareJSONLines_areKeptAsOtherLines() {
    let body = "data: {\"a\": 1}\n\n{\n  \"error\": {\n    \"code\": 503\n  }\n}\n"
    let events = parse([body])
    XCTAssertEqual(events.count, 2)
    XCTAssertEqual(events[1].hasData, false)
    XCTAssertEqual(events[1].otherLines.joined(separator: "\n"), "{\n  \"error\": {\n    \"code\": 503\n  }\n}")
  }
}
