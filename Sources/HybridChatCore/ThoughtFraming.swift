/// Turns a model's thoughts, piece by piece as they stream, into the text
/// written for them: the opening before the first piece, the pieces with
/// their control characters made visible (`TerminalText`), and the closing
/// once the thoughts end.
///
/// The faint and normal escapes are the only escapes written: the model's
/// text cannot drive the terminal, thoughts included. The closing always
/// ends the line, so the answer starts on a line of its own; call `close()`
/// on every way out (the answer starting, an error, Ctrl-C), or a terminal
/// stays faint.
public struct ThoughtFraming: Sendable {
  /// ANSI SGR 2: faint.
  public static let faint = "\u{1B}[2m"
  /// ANSI SGR 22: neither faint nor bold, the normal intensity.
  public static let normalIntensity = "\u{1B}[22m"
  /// The line before framed thoughts.
  public static let header = "[thinking]\n"
  /// The line after framed thoughts.
  public static let footer = "[end of thinking]\n"

  private let style: ThoughtDisplay.Style
  /// Whether the opening has been written and the closing has not.
  public private(set) var isOpen = false
  private var endsLine = true

  /// A framing in `style`, with nothing written yet.
  public init(style: ThoughtDisplay.Style) {
    self.style = style
  }

  /// What to write for the next piece of thought: the opening first if the
  /// thoughts were closed; nothing for an empty piece.
  public mutating func thought(_ piece: some StringProtocol) -> String {
    guard !piece.isEmpty else { return "" }
    let text = TerminalText.neutralized(piece)
    var result = ""
    if !isOpen {
      isOpen = true
      result = style == .dimmed ? Self.faint : Self.header
    }
    endsLine = text.hasSuffix("\n")
    return result + text
  }

  /// What to write when the thoughts end: the closing, and a line break if
  /// the last piece did not end its line; nothing if they are not open.
  public mutating func close() -> String {
    guard isOpen else { return "" }
    isOpen = false
    let lineBreak = endsLine ? "" : "\n"
    endsLine = true
    // The escape comes before the line break, so that nothing after the
    // thoughts, not even an empty line, is drawn faint.
    return style == .dimmed ? Self.normalIntensity + lineBreak : lineBreak + Self.footer
  }
}
