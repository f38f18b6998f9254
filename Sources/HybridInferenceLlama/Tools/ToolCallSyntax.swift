import HybridInferenceCore
import HybridInferenceJinja

/// How a model writes a tool call, by the family its chat template belongs
/// to; the device prompts with it, forces it by grammar and parses it back.
///
/// - `hermes`: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`,
///   one block per call (Qwen 2.5 / QwQ / Qwen 3, Hermes 2 Pro and 3, Granite 4,
///   MiMo-VL, Bielik: a template that renders `tools` and writes `<tool_call>`
///   around a `{"name": ...}` object).
/// - `llama3`: a bare `{"name": ..., "parameters": {...}}` object as the whole
///   answer (Llama 3.1 / 3.2 / 3.3: the template asks for "a dictionary of
///   argument name and its value").
/// - `mistralJSON`: `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]` (Mistral Nemo).
/// - `generic`: the library's own format for any other model (SmolLM2, a
///   template without tools, or one whose call syntax is not one of the above,
///   such as Mistral Small 3.2's `[TOOL_CALLS]name[ARGS]{...}` or the XML-like
///   calls of Qwen3-Coder and GLM):
///   the tools are described in the system turn, and the answer is either a
///   bare `{"name": ..., "arguments": {...}}` object (a call) or text.
enum ToolCallSyntax: String, Sendable, CaseIterable {
  case hermes
  case llama3
  case mistralJSON
  case generic

  /// The family of a template that renders tools, from its source; nil for
  /// one whose call syntax is none of the template families above.
  static func family(ofTemplate source: String) -> ToolCallSyntax? {
    if source.contains("[TOOL_CALLS][") { return .mistralJSON }
    if source.contains("<tool_call>"), source.contains(#"{\"name\":"#) || source.contains(#"{"name":"#) {
      return .hermes
    }
    if source.contains("dictionary of argument name") { return .llama3 }
    return nil
  }

  /// Whether the template renders the tools and the calls itself (the
  /// generic format puts them in the messages instead).
  var usesTemplateTools: Bool { self != .generic }

  /// The text that starts a call: once it appears, the call's grammar takes over.
  var trigger: String {
    switch self {
    case .hermes: "<tool_call>"
    case .llama3, .generic: "{"
    case .mistralJSON: "[TOOL_CALLS]"
    }
  }

  /// Whether a call can only start the answer (after whitespace), so that
  /// text beginning otherwise is free text.
  var callStartsAnswer: Bool { self == .llama3 || self == .generic }

  /// The key the arguments go under.
  var argumentsKey: String { self == .llama3 ? "parameters" : "arguments" }

  /// What the grammar accepts right after the trigger, up to the tool's
  /// name: a token that completes the trigger may carry only a prefix of
  /// this, or llama.cpp's lazy grammar would be handed text it refuses.
  var opening: [OpeningPiece] {
    let object: [OpeningPiece] = [.text("{"), .space, .text(#""name""#), .space, .text(":"), .space, .text("\"")]
    switch self {
    case .hermes: return [.optional("\n")] + object
    case .llama3, .generic: return Array(object.dropFirst())
    case .mistralJSON: return [.text("[")] + object
    }
  }

  /// One piece of `opening`.
  enum OpeningPiece: Sendable, Equatable {
    case text(String)
    case optional(String)
    static let space = OpeningPiece.optional(" ")
  }

  /// Whether `tail` could be the start of `opening` (every byte matches so far).
  func openingAdmits(_ tail: Substring) -> Bool {
    Self.admits(Array(tail.utf8)[...], opening[...])
  }

  private static func admits(_ tail: ArraySlice<UInt8>, _ pieces: ArraySlice<OpeningPiece>) -> Bool {
    guard !tail.isEmpty else { return true }
    guard let piece = pieces.first else { return false }
    switch piece {
    case .text(let text), .optional(let text):
      let bytes = Array(text.utf8)
      let common = min(bytes.count, tail.count)
      let matches = tail.prefix(common).elementsEqual(bytes.prefix(common))
      let taken =
        matches && (common < bytes.count ? admits([], []) : admits(tail.dropFirst(common), pieces.dropFirst()))
      if case .optional = piece { return taken || admits(tail, pieces.dropFirst()) }
      return taken
    }
  }
}
