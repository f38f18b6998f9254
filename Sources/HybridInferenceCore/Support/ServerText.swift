/// Text that a server (or a model) wrote, made safe to put in an error, a
/// description, a log line or a terminal: bounded in length and inert.
///
/// Why: an error body is the server's to fill. A proxy can answer with a
/// 30 MiB message, and a hostile or broken one with terminal escape
/// sequences (`ESC [ 2 J` clears the screen, `ESC ] 8` plants a link, `ESC ] 52`
/// writes the clipboard) or line breaks that forge extra log lines. Every
/// description of the library promises one line that is safe to log, so the
/// text is cut and its control characters are written out as escapes
/// before it gets there.
///
/// Escaped: C0 controls (U+0000 to U+001F: newline as `\n`, carriage return
/// as `\r`, tab as `\t`, the rest as `\u{1B}`), DEL, C1 controls (U+0080 to
/// U+009F, which some terminals obey as 8-bit escapes) and the Unicode line
/// and paragraph separators (U+2028, U+2029), which end lines in some log
/// viewers. Each escape is printable ASCII, so escaping twice changes
/// nothing, and neither does cutting twice at the same limit.
package enum ServerText {
  /// How much of a server's message an error keeps: 4 KiB of UTF-8, enough
  /// for any real API error (Google's longest are a few hundred bytes), small
  /// enough that a log line stays a line.
  package static let maximumBytes = 4096

  /// `text` with its control characters escaped, cut to at most `limit`
  /// bytes of UTF-8 (on a scalar boundary, so the result is valid text); a
  /// cut text ends with `…` and how long the original was.
  package static func inert(_ text: some StringProtocol, limit: Int = maximumBytes) -> String {
    let total = text.utf8.count
    if total <= limit, !text.unicodeScalars.contains(where: needsEscape) { return String(text) }
    let marker = "… (\(total) bytes in all)"
    let room = max(limit - marker.utf8.count, 0)
    var result = ""
    var used = 0
    // What is kept when the text turns out too long: the longest prefix that
    // leaves room for the marker.
    var cutPrefix: String?
    for scalar in text.unicodeScalars {
      let piece = needsEscape(scalar) ? escape(scalar) : String(scalar)
      let size = piece.utf8.count
      if cutPrefix == nil, used + size > room { cutPrefix = result }
      guard used + size <= limit else { return (cutPrefix ?? result) + marker }
      result += piece
      used += size
    }
    return result
  }

  /// Whether `scalar` is written out as an escape.
  static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
    default: false
    }
  }

  /// The printable escape of one control character (`\n`, `\r`, `\t`, else
  /// `\u{1B}`); `package` so the CLI's terminal text writes the same escapes.
  package static func escape(_ scalar: Unicode.Scalar) -> String {
    switch scalar {
    case "\n": "\\n"
    case "\r": "\\r"
    case "\t": "\\t"
    default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
    }
  }
}
