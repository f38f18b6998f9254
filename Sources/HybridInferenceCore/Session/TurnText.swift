/// The text of one turn, as the caller sees it: what `respond` returns as
/// `content` and what the stream's snapshots hold.
///
/// The decision for requests with tools: an intermediate round's text (a
/// model that says "Let me check." and then calls a tool) is **kept, and the
/// next rounds extend it**. The caller has usually seen it stream by already,
/// and a snapshot must never shrink, so `respond`, the stream and the
/// transcript all agree on it: the turn's text is the text of each of its
/// answers (the transcript's model entries), in order, joined by a blank line
/// (`separator`) where both sides are non-empty. A structured answer is the
/// exception: its text must be the final round's JSON, so there an earlier
/// round's text stays in the transcript only (`keepsEarlierRounds` false).
///
/// Appending grows one string in place, so a delta costs what it adds.
struct TurnText: Sendable {
  /// Between the text of two rounds.
  static let separator = "\n\n"

  /// Whether earlier rounds' text stays (text answers) or each round starts
  /// afresh (structured answers).
  let keepsEarlierRounds: Bool
  /// The turn's text so far.
  private(set) var text = ""
  private var separatorDue = false

  init(keepsEarlierRounds: Bool) {
    self.keepsEarlierRounds = keepsEarlierRounds
  }

  /// A new round of the turn begins.
  mutating func startRound() {
    if keepsEarlierRounds {
      separatorDue = !text.isEmpty
    } else {
      text = ""
    }
  }

  /// Appends text of the current round.
  mutating func append(_ added: String) {
    guard !added.isEmpty else { return }
    if separatorDue {
      text += Self.separator
      separatorDue = false
    }
    text += added
  }
}
