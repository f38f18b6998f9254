/// The tags that open and close a model's thought block (`<think>` and
/// `</think>`), as its chat template declares them.
///
/// A template is recognised by the end tag its source names (a template that
/// thinks strips or prints the reasoning by it); the tags are bounded
/// (`maximumTagLength`), so a template cannot make each token's check cost
/// more than a few dozen comparisons.
struct ThoughtSyntax: Sendable, Hashable {
  /// The opening tag (`<think>`).
  let start: String
  /// The closing tag (`</think>`).
  let end: String

  /// The most Unicode scalars a tag may have: the longest known tag has 18.
  static let maximumTagLength = 64

  /// Tags of at most `maximumTagLength` scalars each, neither empty; nil otherwise.
  init?(start: String, end: String) {
    let lengths = [start.unicodeScalars.count, end.unicodeScalars.count]
    guard lengths.allSatisfy({ $0 > 0 && $0 <= Self.maximumTagLength }) else { return nil }
    self.start = start
    self.end = end
  }

  /// Qwen3, QwQ, DeepSeek-R1 and its distills, SmolLM3, Phi-4-reasoning.
  static let think = ThoughtSyntax(uncheckedStart: "<think>", end: "</think>")

  /// The pairs the library knows, the most common first: `<think>`, Command
  /// R7B's, Seed-OSS's and Magistral's.
  static let known: [ThoughtSyntax] = [
    think,
    ThoughtSyntax(uncheckedStart: "<|START_THINKING|>", end: "<|END_THINKING|>"),
    ThoughtSyntax(uncheckedStart: "<seed:think>", end: "</seed:think>"),
    ThoughtSyntax(uncheckedStart: "[THINK]", end: "[/THINK]"),
  ]

  /// The known pair whose end tag the template's source names, if any.
  static func declared(in templateSource: String) -> ThoughtSyntax? {
    known.first { templateSource.contains($0.end) }
  }

  /// Whether `generationPrompt` (the rendered prompt) ends inside an open
  /// block: its last non-space text is the start tag, as Qwen3's with
  /// `enable_thinking` or the DeepSeek-R1 distills' (`<think>\n`) is. The
  /// model's text then starts as thought.
  func isOpened(by generationPrompt: String) -> Bool {
    var scalars = generationPrompt.unicodeScalars[...]
    while let last = scalars.last, ThoughtSplitter.isSpace(last) { scalars = scalars.dropLast() }
    return scalars.reversed().starts(with: start.unicodeScalars.reversed())
  }

  private init(uncheckedStart start: String, end: String) {
    self.start = start
    self.end = end
  }
}
