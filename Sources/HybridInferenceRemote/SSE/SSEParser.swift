import Foundation
import HybridInferenceCore

/// An incremental parser for `text/event-stream` bodies.
///
/// Bytes go in as they arrive from the network, in chunks of any size (a
/// chunk may end inside a line, inside a UTF-8 character or between the CR
/// and LF of a CRLF); each event comes out as soon as its terminating blank
/// line has been read. Lines end with LF, CRLF or a lone CR, as the SSE
/// specification allows. An event left without a blank line at the end of the
/// body is still delivered by `finish()`.
///
/// Parsing is linear in the body's size: a scan cursor remembers how far the
/// unfinished line has been searched for its end, so a large event arriving
/// in many small chunks is scanned once, not once per chunk. Memory is
/// bounded: one event (its lines so far and its unfinished line) may take at
/// most `maximumEventBytes`, so a server that never ends its event cannot
/// grow the buffer without limit.
struct SSEParser: Sendable {
  /// Why a body was refused.
  enum Failure: Error, Equatable {
    /// One event grew past the limit (attached) before its blank line.
    case eventTooLarge(limit: Int)
  }

  /// The most bytes one event may take, its line terminators included.
  let maximumEventBytes: Int
  /// Bytes the line search has looked at, for checking that parsing stays linear.
  private(set) var scannedByteCount = 0

  private var buffer: [UInt8] = []
  private var position = 0
  /// Where the search for the next line terminator resumes: no byte in
  /// `position..<scanned` ends a line.
  private var scanned = 0
  private var pending = PendingEvent()
  private var atStart = true

  private struct PendingEvent: Sendable {
    var type: String?
    var dataLines: [String] = []
    var hasData = false
    var otherLines: [String] = []
    /// Bytes of the lines read so far, terminators included.
    var byteCount = 0

    var isEmpty: Bool { !hasData && otherLines.isEmpty && type == nil }
  }

  /// A parser that refuses any event larger than `maximumEventBytes`.
  init(maximumEventBytes: Int = .max) {
    self.maximumEventBytes = maximumEventBytes
  }

  /// Feeds the next bytes of the body; returns every event they complete.
  mutating func feed(_ bytes: some Sequence<UInt8>) throws(Failure) -> [SSEEvent] {
    buffer.append(contentsOf: bytes)
    if atStart {
      skipByteOrderMark()
      if atStart { return [] }
    }
    var events: [SSEEvent] = []
    while let line = try nextLine(atEndOfInput: false) {
      if let event = consume(line) { events.append(event) }
    }
    try checkSize(unfinished: buffer.count - position)
    compact()
    return events
  }

  /// Ends the body: returns the last event if it was not followed by a blank line.
  mutating func finish() throws(Failure) -> [SSEEvent] {
    var events: [SSEEvent] = []
    while let line = try nextLine(atEndOfInput: true) {
      if let event = consume(line) { events.append(event) }
    }
    if let event = dispatch() { events.append(event) }
    buffer.removeAll()
    position = 0
    scanned = 0
    return events
  }

  /// Skips a UTF-8 byte-order mark at the very start of the body; waits
  /// while the first bytes could still be one.
  private mutating func skipByteOrderMark() {
    let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
    let prefix = buffer.prefix(3)
    guard prefix.elementsEqual(mark.prefix(prefix.count)) else {
      atStart = false
      return
    }
    if prefix.count == 3 {
      position = 3
      scanned = 3
      atStart = false
    }
  }

  /// The index of the first CR or LF in `from..<buffer.count`, if any.
  private mutating func firstTerminator(from start: Int) -> Int? {
    let end = buffer.count
    let found = buffer.withUnsafeBufferPointer { bytes -> Int? in
      var index = start
      while index < end {
        let byte = bytes[index]
        if byte == 0x0A || byte == 0x0D { return index }
        index += 1
      }
      return nil
    }
    scannedByteCount += (found.map { $0 + 1 } ?? end) - start
    return found
  }

  /// The next complete line without its terminator, or nil when the buffer
  /// holds no complete line. A CR at the very end of the buffer waits for the
  /// next chunk, which may start with the LF of a CRLF.
  private mutating func nextLine(atEndOfInput: Bool) throws(Failure) -> String? {
    guard let end = firstTerminator(from: max(scanned, position)) else {
      scanned = buffer.count
      guard atEndOfInput && position < buffer.count else { return nil }
      return try takeLine(upTo: buffer.count, next: buffer.count)
    }
    var next = end + 1
    if buffer[end] == 0x0D {
      if next == buffer.count && !atEndOfInput {
        scanned = end
        return nil
      }
      if next < buffer.count && buffer[next] == 0x0A { next += 1 }
    }
    return try takeLine(upTo: end, next: next)
  }

  /// The line `position..<end`; the next one starts at `next`.
  private mutating func takeLine(upTo end: Int, next: Int) throws(Failure) -> String {
    let isComment = end > position && buffer[position] == UInt8(ascii: ":")
    if end > position && !isComment {
      pending.byteCount += next - position
      try checkSize(unfinished: 0)
    }
    let line = String(decoding: buffer[position..<end], as: UTF8.self)
    position = next
    scanned = next
    return line
  }

  /// Throws when the pending event, with `unfinished` bytes of a line still
  /// to come, is over the limit.
  private func checkSize(unfinished: Int) throws(Failure) {
    let (total, overflow) = pending.byteCount.addingReportingOverflow(unfinished)
    if overflow || total > maximumEventBytes { throw .eventTooLarge(limit: maximumEventBytes) }
  }

  /// Applies one line; returns an event when the line is the blank line that ends it.
  private mutating func consume(_ line: String) -> SSEEvent? {
    if line.isEmpty { return dispatch() }
    if line.hasPrefix(":") { return nil }
    let field: Substring
    var value: Substring
    if let colon = line.firstIndex(of: ":") {
      field = line[..<colon]
      value = line[line.index(after: colon)...]
      if value.hasPrefix(" ") { value = value.dropFirst() }
    } else {
      field = line[...]
      value = ""
    }
    switch field {
    case "data":
      pending.dataLines.append(String(value))
      pending.hasData = true
    case "event":
      pending.type = String(value)
    case "id", "retry":
      break
    default:
      pending.otherLines.append(line)
    }
    return nil
  }

  private mutating func dispatch() -> SSEEvent? {
    defer { pending = PendingEvent() }
    guard !pending.isEmpty else { return nil }
    return SSEEvent(
      type: pending.type, data: pending.dataLines.joined(separator: "\n"),
      hasData: pending.hasData, otherLines: pending.otherLines)
  }

  /// Drops consumed bytes once they dominate the buffer, so a long stream
  /// does not keep its whole body in memory.
  private mutating func compact() {
    if position > 4096 && position * 2 > buffer.count {
      buffer.removeSubrange(0..<position)
      scanned -= position
      position = 0
    }
  }
}
