/// Tells when generated text has closed its top-level object or array.
///
/// The device grammar ends exactly where the JSON value ends, so the next
/// token could only be an end token: stopping here saves sampling it and
/// makes a model that never emits one finish anyway.
package struct JSONCompletionTracker {
  private var depth = 0
  private var inString = false
  private var escaped = false
  private var started = false

  package init() {}

  /// Feeds more text; true once the top-level container is closed.
  package mutating func feed(_ text: String) -> Bool {
    for byte in text.utf8 {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
        started = true
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if started, depth == 0 { return true }
      default: break
      }
    }
    return false
  }
}
