import HybridInferenceCore

/// How much of a streamed response's thought has been shown, so that each
/// snapshot shows only what it added.
///
/// A snapshot's response holds the round's whole thought so far; joining it
/// (`thoughtText`) for every token would copy it every time. This counts
/// the thought parts' bytes instead and copies only the new ones.
public struct ThoughtProgress: Sendable {
  private var shownBytes = 0

  /// A progress with nothing shown.
  public init() {}

  /// The thought `response` holds beyond what was shown, now marked shown.
  ///
  /// A response with less thought than was shown belongs to a new round (a
  /// tool's answer went back to the model): its thought is shown from the
  /// start.
  public mutating func newThought(in response: GenerateContentResponse) -> String {
    let parts = response.candidates.first?.content?.parts ?? []
    var total = 0
    for part in parts where part.thought == true { total += part.text?.utf8.count ?? 0 }
    if total < shownBytes { shownBytes = 0 }
    guard total > shownBytes else { return "" }
    var skip = shownBytes
    var new = ""
    for part in parts where part.thought == true {
      guard let text = part.text else { continue }
      let bytes = text.utf8
      if skip >= bytes.count {
        skip -= bytes.count
        continue
      }
      new += String(decoding: bytes.dropFirst(skip), as: UTF8.self)
      skip = 0
    }
    shownBytes = total
    return new
  }
}
