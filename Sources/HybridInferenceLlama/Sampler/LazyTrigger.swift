import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// Where a lazy tool-call grammar starts, tracked beside llama.cpp's own
/// lazy grammar (`llama_sampler_init_grammar_lazy_patterns`).
///
/// llama.cpp leaves sampling free until the trigger appears, then replays
/// the text from the trigger on into the grammar. Text the grammar refuses
/// there (a token that completes `{` and goes on with `}`) would make
/// llama.cpp throw across its C API, so this guard keeps the token that
/// completes the trigger to text the grammar accepts (`ToolCallSyntax.opening`),
/// and knows when the grammar has taken over.
struct LazyTrigger {
  let syntax: ToolCallSyntax
  /// The trigger as one token, when the vocabulary has it as one and the
  /// call may start anywhere: llama.cpp then triggers on that token alone.
  let token: llama_token?
  private(set) var awaiting = true
  /// The answer so far, while awaiting (pattern triggers only).
  private var produced: [UInt8] = []
  /// A call that must start the answer, when text has started instead.
  private var answeredInText = false

  init(syntax: ToolCallSyntax, model: LlamaModel) throws(HybridInferenceError) {
    self.syntax = syntax
    let tokens = try model.tokenize(syntax.trigger, addSpecial: false, parseSpecial: true)
    token = !syntax.callStartsAnswer && tokens.count == 1 ? tokens.first : nil
  }

  /// The regular expression llama.cpp watches the answer with; its first
  /// group starts the text the grammar is fed.
  var pattern: String {
    let escaped = syntax.trigger.map { "\\^$.|?*+()[]{}".contains($0) ? "\\\($0)" : String($0) }.joined()
    return syntax.callStartsAnswer ? "^[ \\t\\n\\r]*(\(escaped))[\\s\\S]*$" : "(\(escaped))"
  }

  /// Whether `piece` may come next: always, unless it completes the trigger
  /// with text after it that the grammar would refuse.
  func admits(_ piece: ArraySlice<UInt8>) -> Bool {
    guard awaiting, token == nil, !answeredInText, let tail = tailAfterTrigger(piece) else { return true }
    return syntax.openingAdmits(Substring(decoding: tail, as: UTF8.self))
  }

  /// Records an accepted token.
  mutating func accept(_ token: llama_token, piece: ArraySlice<UInt8>) {
    guard awaiting else { return }
    if let trigger = self.token {
      if token == trigger { awaiting = false }
      return
    }
    if answeredInText { return }
    if tailAfterTrigger(piece) != nil {
      awaiting = false
      produced = []
      return
    }
    produced.append(contentsOf: piece)
    if syntax.callStartsAnswer, produced.contains(where: { !Self.isSpace($0) }) { answeredInText = true }
  }

  /// The bytes after the trigger when `piece` completes it, else nil.
  private func tailAfterTrigger(_ piece: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
    let text = produced + piece
    let trigger = Array(syntax.trigger.utf8)
    if syntax.callStartsAnswer {
      guard let first = text.firstIndex(where: { !Self.isSpace($0) }), text[first...].starts(with: trigger) else {
        return nil
      }
      return text[(first + trigger.count)...]
    }
    let from = max(0, produced.count - trigger.count + 1)
    guard text.count >= trigger.count, from <= text.count - trigger.count else { return nil }
    for start in from...(text.count - trigger.count) where text[start..<(start + trigger.count)].elementsEqual(trigger)
    {
      return text[(start + trigger.count)...]
    }
    return nil
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
  }
}
