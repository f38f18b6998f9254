import HybridInferenceCore

/// How a chat template's model writes tool calls, read from the template
/// itself: the text around the calls, around each call, and between the
/// call's name and its arguments.
///
/// The pattern is what the template prints for a conversation in which the
/// assistant called a probe tool (`ToolCallPattern.derive`), the way
/// llama.cpp's own analyser reads a template by rendering it: the model was
/// trained on that text, so the same text is what the device prompts with,
/// forces by grammar (`gbnf`) and reads back (`read`). One mechanism serves
/// Hermes' `<tool_call>{"name": ...}</tool_call>`, Mistral's
/// `[TOOL_CALLS]name[ARGS]{...}`, DeepSeek's and Kimi's marker sections,
/// Command R7B's action lists, and the XML-like calls of Qwen3-Coder, GLM and
/// MiniMax, whose arguments are tagged one by one (`Arguments.tagged`).
struct ToolCallPattern: Sendable, Equatable {
  /// The text before the first call, starting with `trigger` (may be empty).
  var sectionOpen: String
  /// One call, piece by piece.
  var call: [Piece]
  /// The text between two calls of one answer.
  var separator: String
  /// The text after the last call.
  var sectionClose: String
  /// Whether the template writes several calls in one answer (Llama 3.1
  /// refuses to, for one).
  var allowsSeveral: Bool

  /// One piece of a call.
  enum Piece: Sendable, Equatable {
    /// Text the template writes as it is.
    case text(String)
    /// The tool's name.
    case name
    /// The call's id, where the template prints it (Mistral's `[CALL_ID]`).
    case id
    /// The call's position in the answer, counted from `base` (Kimi K2's
    /// `functions.name:0`, Command R7B's `"tool_call_id": "0"`).
    case index(base: Int)
    /// The arguments.
    case arguments(Arguments)
  }

  /// How the arguments are written.
  enum Arguments: Sendable, Equatable {
    /// One JSON object.
    case json
    /// One tagged pair per argument: `open`, the key, the key's close (one
    /// for string values, one for others: DeepSeek V3.2 marks which), the
    /// value (a string as it is, anything else as JSON) and `valueClose`.
    case tagged(TaggedArguments)
  }

  /// The tags of one argument (`<parameter=` key `>` value `</parameter>`).
  struct TaggedArguments: Sendable, Equatable {
    var open: String
    var keyCloseForString: String
    var keyCloseForOther: String
    var valueClose: String
  }

  /// The text that starts the calls: once it appears, the call's grammar
  /// takes over. It is the first tag of the section (or of the call) with
  /// the word right after it (`<|open|>tools`: Kimi K3 opens every block with
  /// `<|open|>`), or the text up to and with the first tag, or the text
  /// before the first piece that varies.
  var trigger: String {
    if startsAnswer { return "{" }
    let start = (sectionOpen.isEmpty ? leadingText : sectionOpen).trimmingWhitespace
    if let tag = Self.firstTag(of: start), start.hasPrefix(tag) {
      let word = start.dropFirst(tag.count).prefix { !$0.isWhitespace && !"<[{\"".contains($0) }
      return tag + word
    }
    if let open = start.firstIndex(where: { $0 == "<" || $0 == "[" }),
      let tag = Self.firstTag(of: String(start[open...]))
    {
      return String(start[..<open]) + tag
    }
    return start
  }

  /// Whether a call can only be the whole answer: a bare JSON object with no
  /// marker before it (Llama 3.x), so text beginning otherwise is free text.
  var startsAnswer: Bool {
    sectionOpen.isEmpty && leadingText.hasPrefix("{")
  }

  /// The text the template writes before the first piece that varies.
  var leadingText: String {
    guard case .text(let text)? = call.first else { return "" }
    return text
  }

  /// The literal text after the trigger up to the first piece that varies:
  /// what a token completing the trigger may carry.
  var opening: String {
    let whole = sectionOpen + leadingText
    let trigger = self.trigger
    guard let range = whole.range(of: trigger) else { return "" }
    return String(whole[range.upperBound...])
  }

  /// Every text the pattern writes as it is.
  var literals: [String] {
    var texts = [sectionOpen, separator, sectionClose]
    for piece in call {
      switch piece {
      case .text(let text): texts.append(text)
      case .arguments(.tagged(let tags)):
        texts += [tags.open, tags.keyCloseForString, tags.keyCloseForOther, tags.valueClose]
      case .name, .id, .index, .arguments(.json): break
      }
    }
    return texts
  }

  /// The first `<...>` or `[...]` tag at the start of `text` (after
  /// spaces), when one is there.
  static func firstTag(of text: String) -> String? {
    let trimmed = text.drop { $0.isWhitespace }
    guard let open = trimmed.first, open == "<" || open == "[" else { return nil }
    let close: Character = open == "<" ? ">" : "]"
    guard let end = trimmed.firstIndex(of: close) else { return nil }
    let tag = trimmed[...end]
    return tag.contains(where: \.isWhitespace) || tag.count < 3 ? nil : String(tag)
  }
}
