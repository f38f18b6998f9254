import Foundation

/// An incremental HTTP/1.1 response parser: bytes in as the socket yields
/// them, events out (the head, body bytes, the end), in bounded memory.
///
/// Framing follows RFC 9112 §6.3: no body for a HEAD request, 1xx, 204 and
/// 304; `Transfer-Encoding: chunked` (size lines overflow-checked, extensions
/// skipped, trailers read and dropped; with a `Content-Length` beside it, an
/// error); else `Content-Length` (repeated values must agree); else the body
/// runs until the server closes. Interim
/// 1xx heads are skipped. Only the current line of a head or chunk frame is
/// held, within `HTTP1Limits`; body bytes are handed on as they come.
struct HTTP1ResponseParser {
  enum Event: Equatable, Sendable {
    case head(HTTP1ResponseHead)
    case body(Data)
    /// The response is complete.
    case end
  }

  private enum State: Equatable {
    case head
    case fixed(remaining: Int)
    case chunkSize
    case chunkData(remaining: Int)
    case chunkDataEnd
    case trailers
    case untilClose
    case done
  }

  private let isHeadRequest: Bool
  private var state = State.head
  /// The unfinished line of a head, chunk size or trailer.
  private var line: [UInt8] = []
  private var statusLine: (code: Int, isHTTP11: Bool)?
  private var fields: [(name: String, value: String)] = []
  /// Head bytes so far (interim heads included), or trailer bytes.
  private var frameBytes = 0
  private var trailerFields = 0
  /// The final head, once it has been read.
  private(set) var head: HTTP1ResponseHead?
  /// Whether any byte arrived: a reused connection that fails before one is
  /// safe to try again.
  private(set) var receivedAnyByte = false
  /// Bytes came after the response ended, or the body ended with the
  /// connection: the connection is not reusable.
  private var trailingBytes = false

  /// - Parameter isHeadRequest: The request was HEAD: no body follows any head.
  init(isHeadRequest: Bool = false) {
    self.isHeadRequest = isHeadRequest
  }

  /// Whether the response has ended.
  var isComplete: Bool { state == .done }

  /// Whether the connection may carry another request: the response ended
  /// by its framing (not by a close), the server allows it, and nothing
  /// came after it.
  var allowsReuse: Bool {
    guard state == .done, !trailingBytes, let head else { return false }
    return head.allowsReuse
  }

  mutating func feed(_ bytes: some Collection<UInt8>) throws(HTTP1ParseError) -> [Event] {
    let array = Array(bytes)
    var result: Result<[Event], HTTP1ParseError> = .success([])
    array.withUnsafeBufferPointer { buffer in
      do throws(HTTP1ParseError) {
        result = .success(try feed(buffer))
      } catch {
        result = .failure(error)
      }
    }
    return try result.get()
  }

  /// Parses the next bytes of the response.
  mutating func feed(_ input: UnsafeBufferPointer<UInt8>) throws(HTTP1ParseError) -> [Event] {
    var events: [Event] = []
    // A read's chunks, gathered in an array rather than `Data`: appending a
    // tiny chunk to `Data` costs several times what its framing does.
    var body: [UInt8] = []
    if !input.isEmpty { receivedAnyByte = true }
    var index = 0
    let count = input.count
    while index < count {
      switch state {
      case .chunkSize where line.isEmpty:
        // The common case, a whole size line in this read: parsed in place,
        // with no copy (a body of tiny chunks is mostly size lines).
        let end = min(count, index + HTTP1Limits.maximumChunkLineBytes + 1)
        guard let newline = input[index..<end].firstIndex(of: 0x0A) else { fallthrough }
        var text = input[index..<newline]
        if text.last == 0x0D { text = text.dropLast() }
        try chunkSizeLine(text)
        index = newline + 1
      case .head, .chunkSize, .trailers:
        let limit = state == .chunkSize ? HTTP1Limits.maximumChunkLineBytes : HTTP1Limits.maximumLineBytes
        guard let newline = input[index..<count].firstIndex(of: 0x0A) else {
          try take(input[index..<count], limit: limit)
          index = count
          break
        }
        try take(input[index..<newline], limit: limit)
        index = newline + 1
        var text = line[...]
        if text.last == 0x0D { text = text.dropLast() }
        let current = Array(text)
        line.removeAll(keepingCapacity: true)
        switch state {
        case .head:
          if let head = try headLine(current[...]) {
            events.append(.head(head))
            if state == .done { events.append(.end) }
          }
        case .chunkSize:
          try current.withUnsafeBufferPointer { (buffer) throws(HTTP1ParseError) in try chunkSizeLine(buffer[...]) }
        default:
          if current.isEmpty {
            state = .done
            if !body.isEmpty { events.append(.body(Data(body))) }
            body.removeAll()
            events.append(.end)
          } else {
            trailerFields += 1
            guard trailerFields <= HTTP1Limits.maximumHeaderFields else { throw .tooManyHeaderFields }
          }
        }
      case .fixed(let remaining):
        // One piece a read, handed on as it is.
        let taken = min(remaining, count - index)
        events.append(.body(Data(UnsafeBufferPointer(rebasing: input[index..<(index + taken)]))))
        index += taken
        state = taken == remaining ? .done : .fixed(remaining: remaining - taken)
        if state == .done { events.append(.end) }
      case .chunkData(let remaining):
        let taken = min(remaining, count - index)
        body.append(contentsOf: input[index..<(index + taken)])
        index += taken
        state = taken == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - taken)
      case .chunkDataEnd:
        let byte = input[index]
        index += 1
        if byte == 0x0D, line.isEmpty {
          line.append(byte)
        } else if byte == 0x0A {
          line.removeAll(keepingCapacity: true)
          state = .chunkSize
        } else {
          throw .malformedChunk
        }
      case .untilClose:
        events.append(.body(Data(UnsafeBufferPointer(rebasing: input[index..<count]))))
        index = count
      case .done:
        trailingBytes = true
        index = count
      }
    }
    if !body.isEmpty { events.append(.body(Data(body))) }
    return events
  }

  /// The connection has ended: the events that completes (the end of a body
  /// that runs until close), or why the response is incomplete.
  mutating func finish() throws(HTTP1ParseError) -> [Event] {
    switch state {
    case .done: return []
    case .untilClose:
      state = .done
      trailingBytes = true
      return [.end]
    case .head where !receivedAnyByte: throw .closedBeforeResponse
    default: throw .truncated
    }
  }

  /// Appends part of a line, within the line and frame limits.
  private mutating func take(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence, limit: Int) throws(HTTP1ParseError) {
    guard bytes.count <= limit - line.count else { throw .lineTooLong }
    if state != .chunkSize {
      frameBytes += bytes.count + 1
      guard frameBytes <= HTTP1Limits.maximumHeadBytes else { throw .headTooLarge }
    }
    line.append(contentsOf: bytes)
  }

  /// One line of a head; the head once its blank line has come.
  private mutating func headLine(_ text: ArraySlice<UInt8>) throws(HTTP1ParseError) -> HTTP1ResponseHead? {
    guard let status = statusLine else {
      // A blank line before the status line is tolerated (RFC 9112 §2.2).
      if text.isEmpty { return nil }
      statusLine = try HTTP1ResponseHead.statusLine(text)
      return nil
    }
    if !text.isEmpty {
      guard text.first != 0x20, text.first != 0x09 else { throw .malformedHeader }  // obsolete folding
      guard fields.count < HTTP1Limits.maximumHeaderFields else { throw .tooManyHeaderFields }
      fields.append(try HTTP1ResponseHead.field(text))
      return nil
    }
    let head = HTTP1ResponseHead(statusCode: status.code, isHTTP11: status.isHTTP11, fields: fields)
    statusLine = nil
    fields = []
    if (100..<200).contains(status.code) {
      guard status.code != 101 else { throw .unexpectedUpgrade }
      return nil  // interim; the real head follows
    }
    if isHeadRequest || status.code == 204 || status.code == 304 {
      state = .done
    } else if try head.isChunked() {
      guard head.value("Content-Length") == nil else { throw .conflictingFraming }
      state = .chunkSize
    } else if let length = try head.contentLength() {
      state = length == 0 ? .done : .fixed(remaining: length)
    } else {
      state = .untilClose
    }
    self.head = head
    return head
  }

  /// A chunk size line: hex size, then optional `;extensions`.
  private mutating func chunkSizeLine(_ text: UnsafeBufferPointer<UInt8>.SubSequence) throws(HTTP1ParseError) {
    var size = 0
    var digits = 0
    for byte in text {
      let digit: Int
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = Int(byte - UInt8(ascii: "a")) + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = Int(byte - UInt8(ascii: "A")) + 10
      case UInt8(ascii: ";"), 0x20, 0x09: digit = -1
      default: throw .invalidChunkSize
      }
      if digit < 0 { break }
      let (shifted, overflow) = size.multipliedReportingOverflow(by: 16)
      guard !overflow else { throw .invalidChunkSize }
      size = shifted + digit
      digits += 1
    }
    guard digits > 0 else { throw .invalidChunkSize }
    if size == 0 {
      state = .trailers
      frameBytes = 0
    } else {
      state = .chunkData(remaining: size)
    }
  }
}
