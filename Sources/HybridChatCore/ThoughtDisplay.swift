/// Where a model's thoughts are shown, and how, or whether they are shown
/// at all.
///
/// Stdout is for the answer: a user who redirects it to a file or a pipe
/// gets the answer alone. So thoughts share stdout only when it is a
/// terminal, where a person reads both; otherwise they go to stderr. On a
/// terminal they are dimmed (ANSI faint), which sets them apart without a
/// word in between; anywhere else no escape is written, and plain lines
/// frame them instead (`ThoughtFraming`).
public struct ThoughtDisplay: Sendable, Hashable {
  /// The stream the thoughts are written to.
  public enum Destination: Sendable, Hashable {
    case standardOutput, standardError
  }

  /// How thoughts are set apart from what surrounds them.
  public enum Style: Sendable, Hashable {
    /// Faint (`ESC [ 2 m` ... `ESC [ 22 m`): for a terminal.
    case dimmed
    /// Between a `[thinking]` line and an `[end of thinking]` line, with no
    /// escapes: for a file or a pipe.
    case framed
  }

  /// The stream the thoughts are written to.
  public var destination: Destination
  /// How they are set apart.
  public var style: Style

  /// A display.
  public init(destination: Destination, style: Style) {
    self.destination = destination
    self.style = style
  }

  /// The display for these options and streams; nil when thoughts are not
  /// shown: `--hide-thoughts`, and `--json`, which carries them in its
  /// object and writes nothing else.
  public static func choose(
    for options: ChatOptions, stdoutIsTerminal: Bool, stderrIsTerminal: Bool
  ) -> ThoughtDisplay? {
    if options.hideThoughts || options.json { return nil }
    if stdoutIsTerminal { return ThoughtDisplay(destination: .standardOutput, style: .dimmed) }
    return ThoughtDisplay(destination: .standardError, style: stderrIsTerminal ? .dimmed : .framed)
  }
}
