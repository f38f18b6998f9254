/// Where a cloud model continues another model's broken answer: it was
/// asked to go on exactly from the text so far, and may still begin by
/// repeating its last words. This holds the continuation's first words until
/// there are enough of them (or the stream ends), then drops the longest
/// run of whole words that repeats the end of the earlier text.
///
/// Only whole words count, compared exactly, up to `maximumOverlap` of them:
/// a single repeated word (`the the`) is dropped too, which a real answer
/// rarely needs, and a continuation that restarts the sentence further back
/// is left as it came.
struct SeamCheck {
  /// The most words of overlap looked for; also how many words are held.
  static let maximumOverlap = 16

  private let earlierWords: [Substring]
  private let earlierEndsInSpace: Bool
  private var text = ""
  /// The deltas whose text is held.
  private(set) var held: [GenerateContentResponse] = []

  init(earlier: String) {
    let tail = earlier.suffix(4096)
    earlierWords = Array(tail.split(whereSeparator: \.isWhitespace).suffix(Self.maximumOverlap))
    earlierEndsInSpace = earlier.last?.isWhitespace ?? true
  }

  /// Holds `delta`; returns the text to send, overlap dropped, once enough
  /// words have come (nil while it keeps holding).
  mutating func add(_ delta: GenerateContentResponse) -> String? {
    held.append(delta)
    text += delta.text
    // One more word than the overlap, and that word's end, must have come.
    let words = text.split(whereSeparator: \.isWhitespace)
    guard words.count > Self.maximumOverlap + 1 else { return nil }
    return joined()
  }

  /// The stream ended: the text to send, overlap dropped; nil when nothing was held.
  mutating func finish() -> String? {
    held.isEmpty ? nil : joined()
  }

  /// The held text without the words that repeat the end of the earlier text.
  func joined() -> String {
    let words = text.split(whereSeparator: \.isWhitespace)
    var overlap = min(earlierWords.count, words.count)
    while overlap > 0 {
      if Array(earlierWords.suffix(overlap)) == Array(words.prefix(overlap)) { break }
      overlap -= 1
    }
    guard overlap > 0 else { return text }
    var rest = text[words[overlap - 1].endIndex...]
    // After a space the next word needs none of its own.
    if earlierEndsInSpace { rest = rest.drop(while: \.isWhitespace) }
    return String(rest)
  }
}
