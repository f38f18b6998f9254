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
    var segments: [Segment] = []
    var rest = Substring(rendered)
    for (placeholder, body) in zip(placeholders, bodies) {
      guard let range = rest.range(of: placeholder) else { return nil }
      if range.lowerBound > rest.startIndex { segments.append(.markup(String(rest[..<range.lowerBound]))) }
      if !body.isEmpty { segments.append(.text(body)) }
      rest = rest[range.upperBound...]
      if rest.contains(placeholder) { return nil }
    }
    if !rest.isEmpty { segments.append(.markup(String(rest))) }
    self.segments = segments
  }

  init(segments: [Segment]) {
    self.segments = segments
  }
}
