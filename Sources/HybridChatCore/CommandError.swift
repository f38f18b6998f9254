/// A failure the command reports: one line on stderr and an exit status.
///
/// Two kinds, two statuses, so scripts can tell "you called it wrong" from
/// "it could not answer": usage errors exit 2, runtime errors exit 1.
public struct CommandError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Whose fault the failure is.
  public enum Kind: Sendable, Hashable {
    /// The command line or the prompt is wrong (exit status 2).
    case usage
    /// The command line is fine but the answer could not be produced (exit status 1).
    case runtime
  }

  /// Whose fault the failure is.
  public var kind: Kind
  /// What went wrong, without the `hybrid-chat: error:` prefix.
  public var message: String

  /// A failure of the given kind.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// The command line or the prompt is wrong.
  public static func usage(_ message: String) -> CommandError { CommandError(.usage, message) }

  /// The answer could not be produced.
  public static func runtime(_ message: String) -> CommandError { CommandError(.runtime, message) }

  /// 2 for usage errors, 1 for runtime errors.
  public var exitCode: Int32 {
    switch kind {
    case .usage: 2
    case .runtime: 1
    }
  }

  /// The line printed on stderr: always exactly one line, whatever the
  /// message holds (a server message may contain newlines).
  public var line: String {
    let flat = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    let hint = kind == .usage ? " (see 'hybrid-chat --help')" : ""
    return "hybrid-chat: error: \(flat)\(hint)"
  }

  /// The line.
  public var description: String { line }
}
