/// How many bytes a request's inline media take on the wire, and the check
/// that keeps them under a backend's limit before anything is sent.
///
/// Inline bytes are sent base64, 4 characters for every 3 bytes or part of
/// them; the sum runs over every part of every turn (all of them are sent
/// again on each request), with checked arithmetic, so a transcript that
/// would overflow `Int` reads as over any limit instead of wrapping.
package enum InlineMediaSize {
  /// The base64 length of `count` bytes, or nil when it overflows.
  package static func base64Length(of count: Int) -> Int? {
    guard count >= 0 else { return nil }
    let groups = count / 3 + (count % 3 == 0 ? 0 : 1)
    let (length, overflow) = groups.multipliedReportingOverflow(by: 4)
    return overflow ? nil : length
  }

  /// The base64 bytes of every `inlineData` part in `transcript`, or nil on overflow.
  package static func encodedBytes(in transcript: Transcript) -> Int? {
    var total = 0
    for entry in transcript.entries {
      for part in entry.content.parts {
        guard let blob = part.inlineData else { continue }
        guard let length = base64Length(of: blob.data.count) else { return nil }
        let (sum, overflow) = total.addingReportingOverflow(length)
        if overflow { return nil }
        total = sum
      }
    }
    return total
  }

  /// Throws `requestTooLarge` when the inline media of `transcript` take
  /// more than `limit` bytes encoded (a negative limit counts as 0: no
  /// inline media at all, text still goes).
  package static func check(_ transcript: Transcript, limit: Int) throws(HybridInferenceError) {
    let bytes = encodedBytes(in: transcript)
    guard let bytes, bytes <= max(limit, 0) else { throw .requestTooLarge(bytes: bytes ?? Int.max, limit: limit) }
  }
}
