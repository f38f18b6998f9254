import HybridInferenceCore

/// What the caller sees of the device's generated text: thought parts, answer
/// text and, at the end, tool calls.
///
/// The text first goes through the thought splitter (when the template
/// thinks), so a thought never reaches the tool-call filter or the answer;
/// the answer then goes through the tool-call filter (when tools are
/// offered), which holds back a call's markup.
struct AnswerParts: Sendable {
  private var thoughts: ThoughtSplitter?
  private var calls: ToolCallStreamFilter?

  init(thoughts: ThoughtSplitter?, calls: ToolCallStreamFilter?) {
    self.thoughts = thoughts
    self.calls = calls
  }

  /// The parts `text` makes shown now (possibly none, while a tag or a call is held).
  mutating func feed(_ text: String) -> [Part] {
    parts(of: thoughts?.feed(text) ?? [.answer(text)])
  }

  /// The parts held back when the answer ends: a block still open is
  /// thought, and the held call text becomes `functionCall` parts.
  mutating func finish() throws(HybridInferenceError) -> [Part] {
    var parts = parts(of: thoughts?.finish() ?? [])
    if let (text, calls) = try calls?.finish() {
      if !text.isEmpty { parts.append(Part(text: text)) }
      parts += calls.map { Part(functionCall: $0) }
    }
    return parts
  }

  private mutating func parts(of segments: [ThoughtSplitter.Segment]) -> [Part] {
    var parts: [Part] = []
    for segment in segments {
      switch segment {
      case .thought(let text):
        parts.append(Part(text: text, thought: true))
      case .answer(let text):
        let shown = calls == nil ? text : calls?.feed(text) ?? ""
        if !shown.isEmpty { parts.append(Part(text: shown)) }
      }
    }
    return parts
  }
}
