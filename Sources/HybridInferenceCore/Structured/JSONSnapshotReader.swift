/// Reads a streamed answer's text snapshot by snapshot, feeding the parser
/// only what each snapshot adds, and gives the value so far as a `JSONValue`.
///
/// The session's snapshots hold the whole text so far; reading each from
/// the start would make a stream of n deltas cost n² (200,000 one-character
/// deltas: hours). Here a delta costs its own length plus the depth of the
/// value. A snapshot that does not continue the text read so far (shorter,
/// or different in its last bytes read, as when a tool round starts a new
/// answer) is read from the start instead.
struct JSONSnapshotReader {
  private var parser = JSONPrefixParser(strict: false)
  private var builder = JSONSnapshotBuilder()
  /// UTF-8 bytes read so far.
  private var consumed = 0
  /// The last bytes read, to tell a text that goes on from a new one.
  private var tail: [UInt8] = []

  /// The value so far of `text`, which usually extends the text of the
  /// previous call; nil when not even its beginning is usable yet.
  mutating func read(_ text: String) throws(JSONPrefixParser.SyntaxError) -> JSONValue? {
    let utf8 = text.utf8
    if utf8.count < consumed || !continues(utf8) { self = JSONSnapshotReader() }
    if !parser.isComplete, utf8.count > consumed {
      let start = utf8.index(utf8.startIndex, offsetBy: consumed)
      try parser.feed(text[start...], into: &builder)
    }
    consumed = utf8.count
    tail = Array(utf8.suffix(16))
    return builder.snapshot(partialNumber: parser.partialNumber)
  }

  private func continues(_ utf8: String.UTF8View) -> Bool {
    guard !tail.isEmpty else { return true }
    let end = utf8.index(utf8.startIndex, offsetBy: consumed)
    let start = utf8.index(end, offsetBy: -tail.count)
    return utf8[start..<end].elementsEqual(tail)
  }
}
