/// A rendered prompt that remembers which text came from where.
///
/// Only the template's own markup may become control tokens (`<|im_start|>`);
/// what a user typed, what the instructions say and what a model answered are
/// text, whatever markers they contain. Keeping them apart until tokenization
/// is what stops a message from forging a turn.
struct RenderedPrompt: Equatable, Sendable {
  enum Segment: Equatable, Sendable {
    /// The template's own text: tokenized with control tokens parsed.
    case markup(String)
    /// A message body: tokenized as plain text.
    case text(String)
  }

  var segments: [Segment]

  /// The whole prompt as one string, as a model would read it.
  var text: String {
    segments.map { segment in
      switch segment {
      case .markup(let text), .text(let text): text
      }
    }.joined()
  }

  /// Splits `rendered`, a template's output for messages whose bodies were
  /// replaced by `placeholders`, back into markup and the real `bodies`.
  /// Nil when a placeholder is missing, repeated or out of order (a template
  /// that rewrote a body): the prompt would not be the messages given.
  init?(rendered: String, placeholders: [String], bodies: [String]) {
    // Byte search, one pass: this runs on every request, on prompts of many turns.
    let bytes = Array(rendered.utf8)
    var segments: [Segment] = []
    var cursor = 0
    for (placeholder, body) in zip(placeholders, bodies) {
      let needle = Array(placeholder.utf8)
      guard let found = Self.find(needle, in: bytes, from: cursor) else { return nil }
      if found > cursor { segments.append(.markup(String(decoding: bytes[cursor..<found], as: UTF8.self))) }
      if !body.isEmpty { segments.append(.text(body)) }
      cursor = found + needle.count
    }
    if cursor < bytes.count { segments.append(.markup(String(decoding: bytes[cursor...], as: UTF8.self))) }
    // Each placeholder exactly once: the prefix they share occurs once per placeholder.
    var shared = Array(placeholders.first?.utf8 ?? "".utf8)
    for placeholder in placeholders.dropFirst() {
      shared = Array(zip(shared, placeholder.utf8).prefix { $0 == $1 }.map(\.0))
    }
    if !shared.isEmpty {
      var count = 0
      var from = 0
      while let found = Self.find(shared, in: bytes, from: from) {
        count += 1
        from = found + shared.count
      }
      guard count == placeholders.count else { return nil }
    }
    self.segments = segments
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard let first = needle.first, haystack.count >= needle.count else { return nil }
    var index = start
    let last = haystack.count - needle.count
    while index <= last {
      if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
      index += 1
    }
    return nil
  }

  init(segments: [Segment]) {
    self.segments = segments
  }
}
