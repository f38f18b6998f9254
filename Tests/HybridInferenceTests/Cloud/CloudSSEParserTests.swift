import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The incremental SSE parser, fed in every way the network can split a body.
final class CloudSSEParserTests: XCTestCase {
  private func parse(_ chunks: [String]) throws -> [SSEEvent] {
    var parser = SSEParser()
    var events: [SSEEvent] = []
    for chunk in chunks { events += try parser.feed(Array(chunk.utf8)) }
    return try events + parser.finish()
  }

  private func data(_ events: [SSEEvent]) -> [String] { events.filter(\.hasData).map(\.data) }

  func testLFAndCRLFAndCR_separateEventsAlike() throws {
    XCTAssertEqual(data(try parse(["data: a\n\ndata: b\n\n"])), ["a", "b"])
    XCTAssertEqual(data(try parse(["data: a\r\n\r\ndata: b\r\n\r\n"])), ["a", "b"])
    XCTAssertEqual(data(try parse(["data: a\r\rdata: b\r\r"])), ["a", "b"])
  }

  func testEverySplitPoint_givesTheSameEvents() throws {
    let body = "data: {\"x\": \"é😀\"}\r\n\r\n: comment\r\ndata: line1\r\ndata: line2\r\n\r\ndata: tail"
    let whole = try parse([body])
    XCTAssertEqual(data(whole), ["{\"x\": \"é😀\"}", "line1\nline2", "tail"])
    let bytes = Array(body.utf8)
    for split in 1..<bytes.count {
      var parser = SSEParser()
      let events =
        try parser.feed(bytes[..<split]) + parser.feed(bytes[split...]) + parser.finish()
      XCTAssertEqual(data(events), data(whole), "split at byte \(split)")
    }
    var parser = SSEParser()
    var events: [SSEEvent] = []
    for byte in bytes { events += try parser.feed([byte]) }
    events += try parser.finish()
    XCTAssertEqual(data(events), data(whole), "one byte at a time")
  }

  func testEventsComeOutAsSoonAsTheirBlankLineArrives() throws {
    var parser = SSEParser()
    XCTAssertTrue(try parser.feed(Array("data: first\r\n".utf8)).isEmpty)
    XCTAssertEqual(data(try parser.feed(Array("\r\n".utf8))), ["first"])
    XCTAssertTrue(try parser.feed(Array("data: second".utf8)).isEmpty)
    XCTAssertEqual(data(try parser.finish()), ["second"], "a trailing event without a blank line")
  }

  func testCommentsFieldsAndBOM() throws {
    let events = try parse(["\u{FEFF}: keep-alive\nevent: update\nid: 7\nretry: 100\ndata:no-space\ndata\n\n"])
    XCTAssertEqual(events.count, 1)
    XCTAssertEqual(events.first?.type, "update")
    XCTAssertEqual(events.first?.data, "no-space\n")
    XCTAssertEqual(events.first?.otherLines, [])
    XCTAssertTrue(try parse([": only a comment\n\n"]).isEmpty)
  }

  func testBareJSONLines_areKeptAsOtherLines() throws {
    let body = "data: {\"a\": 1}\n\n{\n  \"error\": {\n    \"code\": 503\n  }\n}\n"
    let events = try parse([body])
    XCTAssertEqual(events.count, 2)
    XCTAssertEqual(events[1].hasData, false)
    XCTAssertEqual(events[1].otherLines.joined(separator: "\n"), "{\n  \"error\": {\n    \"code\": 503\n  }\n}")
  }

  /// A large event arriving in small chunks is scanned once: the line search
  /// resumes where the last chunk's search ended (issue 9, point 6). Before
  /// the scan cursor, every chunk rescanned the whole unfinished line.
  func testLargeEventInSmallChunks_isScannedOnce() throws {
    var parser = SSEParser()
    let size = 1 << 20
    let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1024)
    XCTAssertTrue(try parser.feed(Array("data: ".utf8)).isEmpty)
    for _ in 0..<(size / chunk.count) { XCTAssertTrue(try parser.feed(chunk).isEmpty) }
    let events = try parser.feed(Array("\r\n\r\n".utf8))
    XCTAssertEqual(events.first?.data.utf8.count, size)
    XCTAssertLessThanOrEqual(parser.scannedByteCount, size + 64, "each byte is scanned once")
  }

  /// One event may not pass its limit: neither its complete lines nor a line
  /// that never ends (an endless body); the events before it still come out.
  func testEventLargerThanTheLimit_throws() throws {
    var parser = SSEParser(maximumEventBytes: 100)
    XCTAssertEqual(data(try parser.feed(Array("data: small\n\n".utf8))), ["small"])
    let line = "data: " + String(repeating: "y", count: 40) + "\n"
    XCTAssertTrue(try parser.feed(Array((line + line).utf8)).isEmpty, "94 bytes: under the limit")
    XCTAssertThrowsError(try parser.feed(Array(line.utf8))) { error in
      XCTAssertEqual(error as? SSEParser.Failure, .eventTooLarge(limit: 100))
    }

    var endless = SSEParser(maximumEventBytes: 100)
    XCTAssertTrue(try endless.feed(Array(("data: " + String(repeating: "z", count: 90)).utf8)).isEmpty)
    XCTAssertThrowsError(try endless.feed(Array(String(repeating: "z", count: 10).utf8)), "no line break, ever")

    // The limit is per event: many events, each under it, are fine.
    var many = SSEParser(maximumEventBytes: 100)
    var count = 0
    for _ in 0..<1000 { count += try many.feed(Array((line + "\n").utf8)).count }
    XCTAssertEqual(count, 1000)
    // Comments are not kept, so they do not count.
    var comments = SSEParser(maximumEventBytes: 100)
    for _ in 0..<100 { XCTAssertTrue(try comments.feed(Array(": keep-alive padding padding\n".utf8)).isEmpty) }
  }

  /// A data line and a bare JSON error line in one event keep both.
  func testDataAndBareJSONInOneEvent_keepBoth() throws {
    let events = try parse(["data: {\"a\": 1}\n{\"error\": {\"code\": 503}}\n\n"])
    XCTAssertEqual(events.count, 1)
    XCTAssertEqual(events.first?.data, "{\"a\": 1}")
    XCTAssertEqual(events.first?.otherLines, ["{\"error\": {\"code\": 503}}"])
  }

  func testTrimmedDataAndErrorObjectSniffing_readOnlyTheEnds() {
    XCTAssertEqual(SSEEvent(data: " \t{\"a\": 1} \t").trimmedData, "{\"a\": 1}")
    XCTAssertEqual(SSEEvent(data: " \t ").trimmedData, "")
    XCTAssertEqual(SSEEvent(otherLines: ["  [1,", "2]  "]).trimmedOtherLines, "[1,\n2]")
    XCTAssertTrue(SSEEvent.opensErrorObject(#"{"error": {"code": 503}}"#))
    XCTAssertTrue(SSEEvent.opensErrorObject("{\n  \"error\": {}}"))
    XCTAssertFalse(SSEEvent.opensErrorObject(#"{"candidates": [], "error": {}}"#))
    XCTAssertFalse(SSEEvent.opensErrorObject(#"{"errors": 1}"#))
    XCTAssertFalse(SSEEvent.opensErrorObject(#"["error"]"#))
  }

  /// Fuzzing finding (sse, crash-9cd32cc9): a body of many short lines (here
  /// lone CRs) was counted as scanned once per line from each line to the
  /// end of the buffer, quadratic; the search itself stops at the first
  /// terminator, and the count now says so.
  func testManyShortLinesInOneChunk_areScannedOnce() throws {
    for terminator in ["\r", "\n", "\r\n", "data: x\n"] {
      var parser = SSEParser()
      let body = String(repeating: terminator, count: 1000)
      _ = try parser.feed(Array(body.utf8))
      _ = try parser.finish()
      XCTAssertLessThanOrEqual(parser.scannedByteCount, body.utf8.count + 1, terminator.debugDescription)
    }
  }
}
