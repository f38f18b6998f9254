/// The tags that open and close a model's thought block (`<think>` and
/// `</think>`), as its chat template declares them.
///
/// A template is recognised by the end tag its source names (a template that
/// thinks strips or prints the reasoning by it), gpt-oss's by its channels;
/// the tags are bounded (`maximumTagLength`), so a template cannot make each
/// token's check cost more than a few dozen comparisons.
struct ThoughtSyntax: Sendable, Hashable {
  /// The opening tag (`<think>`).
  let start: String
  /// The closing tag (`</think>`).
  let end: String
  /// What closes an open block as the template writes it: `\n</think>\n\n`.
  let closing: String
  /// A block closed before it starts, as the template writes it when
  /// thinking is off: `<think>\n\n</think>\n\n`.
  let emptyBlock: String
  /// The text whose presence in a template's source declares these tags.
  private let marker: String

  /// The most Unicode scalars a tag may have: the longest known tag has 45.
  static let maximumTagLength = 64

  /// Tags of at most `maximumTagLength` scalars each, neither empty; nil otherwise.
  init?(start: String, end: String) {
    let lengths = [start.unicodeScalars.count, end.unicodeScalars.count]
    guard lengths.allSatisfy({ $0 > 0 && $0 <= Self.maximumTagLength }) else { return nil }
    self.init(uncheckedStart: start, end: end)
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
    harmony,
  ]

  /// gpt-oss's channels: the analysis channel is the thought, the final
  /// channel the answer. Its `<|end|>` is a control token, which the device
  /// does not print (llama.cpp prints the channel markers), so the block
  /// ends where the final channel's header begins.
  static let harmony = ThoughtSyntax(
    start: "<|channel|>analysis<|message|>", end: "<|start|>assistant<|channel|>final<|message|>",
    closing: "<|end|><|start|>assistant<|channel|>final<|message|>",
    emptyBlock: "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>",
    marker: "<|channel|>")

  /// The known pair the template's source declares, if any.
  static func declared(in templateSource: String) -> ThoughtSyntax? {
    known.first { templateSource.contains($0.marker) }
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

  /// Tags written as the `<think>` templates write them.
  private init(uncheckedStart start: String, end: String) {
    self.init(
      start: start, end: end, closing: "\n" + end + "\n\n", emptyBlock: start + "\n\n" + end + "\n\n", marker: end)
  }

  private init(start: String, end: String, closing: String, emptyBlock: String, marker: String) {
    self.start = start
    self.end = end
    self.closing = closing
    self.emptyBlock = emptyBlock
    self.marker = marker
  }
}
