import Foundation
import HybridInferenceCore

/// One server-sent event: the joined `data:` lines, plus any lines that were
/// not SSE fields at all.
///
/// Gemini streams `data: {json}` events; when it fails in the middle of a
/// stream it may instead write a bare JSON `{"error": ...}` object, which an
/// SSE parser would otherwise drop as unknown fields. Those lines are kept in
/// `otherLines` so the client can report the error they carry.
package struct SSEEvent: Sendable, Hashable {
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

  /// `data` without the spaces and tabs around it.
  ///
  /// Only the ends are looked at, byte by byte: Foundation's
  /// `trimmingCharacters` walks the whole string, most of a second for an
  /// event of tens of MB.
  var trimmedData: Substring { Self.trimmed(data) }

  /// The lines that were not fields, joined, without the spaces and tabs around them.
  var trimmedOtherLines: Substring { Self.trimmed(otherLines.joined(separator: "\n")) }

  /// Whether `json` opens as an object whose first key is `"error"`, which
  /// Google's error object (`{"error": {...}}`, its only key) always does.
  /// Reads a few bytes, not the whole text.
  static func opensErrorObject(_ json: Substring) -> Bool {
    var bytes = json.utf8.drop { isWhitespace($0) }
    guard bytes.first == UInt8(ascii: "{") else { return false }
    bytes = bytes.dropFirst().drop { isWhitespace($0) }
    return bytes.starts(with: #""error""#.utf8)
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  private static func trimmed(_ text: String) -> Substring {
    let utf8 = text.utf8
    guard let first = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
      let last = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
    else { return "" }
    return text[first...last]
  }
}
