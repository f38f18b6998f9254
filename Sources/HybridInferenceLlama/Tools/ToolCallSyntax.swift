import HybridInferenceCore
import HybridInferenceJinja

/// How the device's model writes a tool call: the pattern its chat template
/// prints (`ToolCallPattern`, read from the template), or the library's own
/// generic format for a model whose template has none.
///
/// The generic format describes the tools in the system turn, and the answer
/// is either a bare `{"name": ..., "arguments": {...}}` object (a call) or
/// text (SmolLM2, a template without tools, or one whose call syntax no
/// pattern describes, such as LFM2's Python-style calls).
struct ToolCallSyntax: Sendable, Equatable {
  /// The template's pattern; nil for the generic format.
  let pattern: ToolCallPattern?
  /// Whether the template renders the offered tools itself; when it prints
  /// calls but not tools, the device describes them in the system turn.
  var rendersTools = true

  static let generic = ToolCallSyntax(pattern: nil)

  /// Whether the template renders the tools and the calls itself (the
  /// generic format puts them in the messages instead).
  var usesTemplateTools: Bool { pattern != nil }

  /// The text that starts a call: once it appears, the call's grammar takes over.
  var trigger: String { pattern?.trigger ?? "{" }

  /// Whether a call can only start the answer (after whitespace), so that
  /// text beginning otherwise is free text.
  var callStartsAnswer: Bool { pattern?.startsAnswer ?? true }

  /// What the grammar accepts right after the trigger, up to the first
  /// piece that varies: a token that completes the trigger may carry only a
  /// prefix of this, or llama.cpp's lazy grammar would be handed text it refuses.
  var opening: [OpeningPiece] {
    guard let pattern else {
      return [.space, .text(#""name""#), .space, .text(":"), .space, .text("\"")]
    }
    var pieces: [OpeningPiece] = []
    var run = ""
    var runIsSpace = false
    for character in pattern.opening {
      let isSpace = character.isWhitespace
      if !run.isEmpty, isSpace != runIsSpace {
        pieces.append(runIsSpace ? .optional(run) : .text(run))
        run = ""
      }
      run.append(character)
      runIsSpace = isSpace
    }
    if !run.isEmpty { pieces.append(runIsSpace ? .optional(run) : .text(run)) }
    return pieces
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
