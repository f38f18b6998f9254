/// Splits an on-device answer, as it streams, into the model's thoughts and
/// its answer, the way llama.cpp's `common_chat_parse` reads the same text.
///
/// One optional block opens the answer: spaces, the start tag, the thought,
/// the end tag and spaces; the rest is answer, tags and all. A block that the
/// generation prompt opened (`opened`) makes the text thought from its first
/// character, so an end tag with no start closes it; without it, text that
/// does not begin with the start tag is all answer. A block still open when
/// the text ends is all thought. The thought is trimmed of the spaces at its
/// ends, and the spaces that follow the end tag are dropped.
///
/// Text that may still be a tag (`<thi` at the end of a delta) is held back
/// until the next delta decides it, so a tag split across tokens never shows.
/// Each scalar is looked at a bounded number of times (`TagMatcher`), so the
/// work is linear in the text whatever it holds.
struct ThoughtSplitter: Sendable {
  /// A run of text of one kind.
  enum Segment: Sendable, Hashable {
    case thought(String)
    case answer(String)
  }

  private enum Phase: Sendable {
    /// Nothing but spaces yet, or the start of the start tag.
    case opening
    /// In the block, after its first non-space scalar when `trimmed`.
    case thinking(trimmed: Bool)
    /// The block closed: the spaces that follow it are dropped.
    case closing
    /// The answer: everything passes.
    case answering
  }

  let syntax: ThoughtSyntax
  private var phase: Phase
  private var startTag: TagMatcher
  private var endTag: TagMatcher
  /// Spaces held back: before the start tag, or at the thought's end.
  private var spaces = String.UnicodeScalarView()

  /// A splitter for `syntax`; `opened` when the generation prompt ends inside a block.
  init(syntax: ThoughtSyntax, opened: Bool) {
    self.syntax = syntax
    self.phase = opened ? .thinking(trimmed: false) : .opening
    self.startTag = TagMatcher(syntax.start)
    self.endTag = TagMatcher(syntax.end)
  }

  /// Whether the text so far is inside the block.
  var isThinking: Bool {
    if case .thinking = phase { return true }
    return false
  }

  /// Spaces as llama.cpp's parser skips them.
  static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r"
  }

  /// The segments `text` decides, in order (adjacent ones of a kind joined).
  mutating func feed(_ text: String) -> [Segment] {
    var output = Output()
    for scalar in text.unicodeScalars { step(scalar, into: &output) }
    return output.segments
  }

  /// What was held back when the text ends: a partial start tag is answer,
  /// a partial end tag is thought (the block never closed).
  mutating func finish() -> [Segment] {
    var output = Output()
    switch phase {
    case .opening:
      output.answer.append(contentsOf: spaces)
      output.answer.append(contentsOf: startTag.release().unicodeScalars)
      phase = .answering
    case .thinking:
      // Spaces the text ends with are trimmed; those before a partial end tag are thought.
      if endTag.matched > 0 {
        output.thought.append(contentsOf: spaces)
        output.thought.append(contentsOf: endTag.release().unicodeScalars)
      }
    case .closing, .answering:
      break
    }
    spaces = String.UnicodeScalarView()
    return output.segments
  }

  private mutating func step(_ scalar: Unicode.Scalar, into output: inout Output) {
    switch phase {
    case .opening:
      if startTag.matched == 0 && Self.isSpace(scalar) {
        spaces.append(scalar)
        return
      }
      var released = String.UnicodeScalarView()
      if startTag.feed(scalar, releasing: &released) {
        spaces = String.UnicodeScalarView()
        phase = .thinking(trimmed: false)
      } else if !released.isEmpty {
        output.answer.append(contentsOf: spaces)
        output.answer.append(contentsOf: released)
        output.answer.append(contentsOf: startTag.release().unicodeScalars)
        spaces = String.UnicodeScalarView()
        phase = .answering
      }
    case .thinking(let trimmed):
      if endTag.matched == 0 && Self.isSpace(scalar) {
        if trimmed { spaces.append(scalar) }
        return
      }
      var released = String.UnicodeScalarView()
      if endTag.feed(scalar, releasing: &released) {
        spaces = String.UnicodeScalarView()
        phase = .closing
      } else if !released.isEmpty {
        output.thought.append(contentsOf: spaces)
        output.thought.append(contentsOf: released)
        spaces = String.UnicodeScalarView()
        phase = .thinking(trimmed: true)
      }
    case .closing:
      if Self.isSpace(scalar) { return }
      phase = .answering
      output.answer.append(scalar)
    case .answering:
      output.answer.append(scalar)
    }
  }

  /// Gathers one feed's text: thought always comes before answer (the block
  /// opens the text and never follows the answer), so one buffer each keeps the order.
  private struct Output {
    var thought = String.UnicodeScalarView()
    var answer = String.UnicodeScalarView()

    var segments: [Segment] {
      (thought.isEmpty ? [] : [.thought(String(thought))]) + (answer.isEmpty ? [] : [.answer(String(answer))])
    }
  }
}
