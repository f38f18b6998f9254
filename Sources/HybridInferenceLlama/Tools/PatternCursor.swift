/// A position in an answer's text, for `ToolCallPattern.read`: literal text
/// matched with loose spaces, variable text read up to what follows it.
struct PatternCursor {
  let scalars: [Unicode.Scalar]
  var position = 0

  init(_ text: String) {
    scalars = Array(text.unicodeScalars)
  }

  var count: Int { scalars.count }

  func text(_ range: Range<Int>) -> String {
    ProbeText.string(scalars[range.clamped(to: 0..<count)])
  }

  func starts(with word: String, at index: Int) -> Bool {
    let needle = Array(word.unicodeScalars)
    return index + needle.count <= count && scalars[index..<(index + needle.count)].elementsEqual(needle)
  }

  /// The first place at or after `start` where `word` occurs.
  func find(_ word: String, from start: Int) -> Int? {
    Self.find(Array(word.unicodeScalars), in: scalars, from: start, to: count)
  }

  /// The first place in `text[start..<end]` where `needle` begins and ends.
  static func find(_ needle: [Unicode.Scalar], in text: [Unicode.Scalar], from start: Int, to end: Int) -> Int? {
    guard let first = needle.first else { return nil }
    var index = max(0, start)
    while index + needle.count <= min(end, text.count) {
      if text[index] == first, text[index..<(index + needle.count)].elementsEqual(needle) { return index }
      index += 1
    }
    return nil
  }

  func firstNonSpace(from start: Int) -> Int? {
    (start..<count).first { !Self.isSpace(scalars[$0]) }
  }

  mutating func skipSpaces() {
    while position < count, Self.isSpace(scalars[position]) { position += 1 }
  }

  /// Skips one or more ASCII digits; false when there is none.
  mutating func skipDigits() -> Bool {
    let start = position
    while position < count, ("0"..."9").contains(scalars[position]) { position += 1 }
    return position > start
  }

  /// Matches `literal` here: a run of spaces in it matches any run of spaces
  /// (or none) in the text. With `closing`, the text may end part way (the
  /// end-of-turn token stopped the answer there). Moves past what matched.
  mutating func match(_ literal: String, closing: Bool) -> Bool {
    let expected = Array(literal.unicodeScalars)
    var index = position
    var next = 0
    while next < expected.count {
      if Self.isSpace(expected[next]) {
        while next < expected.count, Self.isSpace(expected[next]) { next += 1 }
        while index < count, Self.isSpace(scalars[index]) { index += 1 }
        continue
      }
      guard index < count else {
        if closing { position = count }
        return closing
      }
      guard scalars[index] == expected[next] else { return false }
      index += 1
      next += 1
    }
    position = index
    return true
  }

  /// The text from here up to the first of `stops` (an empty stop: a space
  /// or newline), moving to it; nil when none follows.
  mutating func read(until stops: [String]) -> String? {
    var best: Int?
    for stop in stops {
      let found = stop.isEmpty ? (position..<count).first { Self.isSpace(scalars[$0]) } : find(stop, from: position)
      if let found, found < (best ?? Int.max) { best = found }
    }
    guard let best else { return nil }
    let read = text(position..<best)
    position = best
    return read
  }

  static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r"
  }
}
