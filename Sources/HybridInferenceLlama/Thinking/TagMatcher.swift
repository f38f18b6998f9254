/// Finds one tag in text that arrives a piece at a time, holding back only
/// the characters that may still be the tag's start.
///
/// A Knuth–Morris–Pratt automaton over the tag's Unicode scalars: each
/// scalar fed costs amortized constant work, and what is held is always a
/// prefix of the tag (its length is the state), so a tag split at any byte
/// boundary is found and a long text never costs more than its own length.
struct TagMatcher: Sendable, Hashable {
  /// The tag's scalars.
  let tag: [Unicode.Scalar]
  /// For each prefix length, the length of its longest proper border.
  private let failure: [Int]
  /// How many of the tag's first scalars the text's tail matches.
  private(set) var matched = 0

  /// A matcher for `tag`, which must not be empty.
  init(_ tag: String) {
    let scalars = Array(tag.unicodeScalars)
    self.tag = scalars
    var failure = [Int](repeating: 0, count: scalars.count + 1)
    var border = 0
    for index in scalars.indices.dropFirst() {
      while border > 0 && scalars[index] != scalars[border] { border = failure[border] }
      if scalars[index] == scalars[border] { border += 1 }
      failure[index + 1] = border
    }
    self.failure = failure
  }

  /// The text held back: the tag's first `matched` scalars.
  var held: String {
    var text = ""
    text.unicodeScalars.append(contentsOf: tag[..<matched])
    return text
  }

  /// Feeds one scalar. Appends to `released` whatever can no longer be part
  /// of the tag, and returns true when the tag is complete (the matcher then
  /// holds nothing).
  mutating func feed(_ scalar: Unicode.Scalar, releasing released: inout String.UnicodeScalarView) -> Bool {
    guard !tag.isEmpty else {
      released.append(scalar)
      return false
    }
    var state = matched
    while state > 0 && tag[state] != scalar { state = failure[state] }
    let next = tag[state] == scalar ? state + 1 : 0
    // The held prefix plus `scalar` is `matched + 1` scalars; the new state
    // keeps the last `next` of them, and the rest are text.
    let dropped = matched + 1 - next
    if dropped > 0 {
      let fromTag = min(dropped, matched)
      released.append(contentsOf: tag[..<fromTag])
      if dropped > matched { released.append(scalar) }
    }
    if next == tag.count {
      matched = 0
      return true
    }
    matched = next
    return false
  }

  /// Gives up the held prefix (the text ended): it is text after all.
  mutating func release() -> String {
    let text = held
    matched = 0
    return text
  }
}
