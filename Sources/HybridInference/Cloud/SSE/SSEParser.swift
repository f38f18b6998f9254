import Foundation

/// One server-sent event: the joined `data:` lines, plus any lines that were
/// not SSE fields at all.
///
/// Gemini streams `data: {json}` events; when it fails in the middle of a
/// stream it may instead write a bare JSON `{"error": ...}` object, which an
/// SSE parser would otherwise drop as unknown fields. Those lines are kept in
/// `otherLines` so the client can report the error they carry.
struct SSEEvent: Sendable, Hashable {
  /// The `event:` field, when the server sent one.
  var type: String?
  /// The `data:` lines joined with `"\n"`; empty when there were none.
  var data: String
  /// Whether at least one `data:` line was present (an empty `data:` counts).
  var hasData: Bool
  /// Lines that were neither a known field nor a comment, in order.
  var otherLines: [String]

  init(type: String? = nil, data: String = "", hasData: Bool = false, otherLines: [String] = []) {
    self.type = type
    self.data = data
    self.hasData = hasData
    self.otherLines = otherLines
  }
}

/// An incremental parser for `text/event-stream` bodies.
///
/// Bytes go in as they arrive from the network, in chunks of any size (a
/// chunk may end inside a line, inside a UTF-8 character or between the CR
/// and LF of a CRLF); each event comes out as soon as its terminating blank
/// line has been read. Lines end with LF, CRLF or a lone CR, as the SSE
/// specification allows. An event left without a blank line at the end of the
/// body is still delivered by `finish()`.
struct SSEParser: Sendable {
  private var buffer: [UInt8] = []
  private var position = 0
  private var pending = PendingEvent()
  private var atStart = true

  private struct PendingEvent: Sendable {
    var type: String?
    var dataLines: [String] = []
    var hasData = false
    var otherLines: [String] = []

    var isEmpty: Bool { !hasData && otherLines.isEmpty && type == nil }
  }

  /// Feeds the next bytes of the body; returns every event they complete.
  mutating func feed(_ bytes: some Sequence<UInt8>) -> [SSEEvent] {
    buffer.append(contentsOf: bytes)
    if atStart {
      skipByteOrderMark()
      if atStart { return [] }
    }
    var events: [SSEEvent] = []
    while let line = nextLine(atEndOfInput: false) {
      if let event = consume(line) { events.append(event) }
    }
    compact()
    return events
  }

  /// Ends the body: returns the last event if it was not followed by a blank line.
  mutating func finish() -> [SSEEvent] {
    var events: [SSEEvent] = []
    while let line = nextLine(atEndOfInput: true) {
      if let event = consume(line) { events.append(event) }
    }
    if let event = dispatch() { events.append(event) }
    buffer.removeAll()
    position = 0
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
      atStart = false
    }
  }

  /// The next complete line without its terminator, or nil when the buffer
  /// holds no complete line. A CR at the very end of the buffer waits for the
  /// next chunk, which may start with the LF of a CRLF.
  private mutating func nextLine(atEndOfInput: Bool) -> String? {
    var index = position
    while index < buffer.count {
      let byte = buffer[index]
      if byte == 0x0A || byte == 0x0D {
        var next = index + 1
        if byte == 0x0D {
          if next == buffer.count && !atEndOfInput { return nil }
          if next < buffer.count && buffer[next] == 0x0A { next += 1 }
        }
        let line = String(decoding: buffer[position..<index], as: UTF8.self)
        position = next
        return line
      }
      index += 1
    }
    if atEndOfInput && position < buffer.count {
      let line = String(decoding: buffer[position...], as: UTF8.self)
      position = buffer.count
      return line
    }
    return nil
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
      position = 0
    }
  }
}
