/// One line typed in the interactive chat: a prompt or a slash command.
public enum ChatInput: Sendable, Hashable {
  /// Send this prompt.
  case prompt(String)
  /// `/reset`: forget the conversation.
  case reset
  /// `/mode <mode>`: switch the inference mode, keeping the conversation.
  case mode(InferenceMode)
  /// `/mode` alone: show the current mode.
  case showMode
  /// `/help`: list the commands.
  case help
  /// `/quit` (or `/exit`): leave.
  case quit
  /// A blank line: nothing to do.
  case empty
  /// A slash command that is not one of the above, with the reason.
  case invalid(String)

  /// Reads one typed line. A line starting with `//` sends the rest,
  /// starting with `/`, as a prompt.
  public init(line: String) {
    let text = line.trimmingWhitespace()
    if text.isEmpty {
      self = .empty
      return
    }
    guard text.hasPrefix("/") else {
      self = .prompt(text)
      return
    }
    if text.hasPrefix("//") {
      self = .prompt(String(text.dropFirst()))
      return
    }
    let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
    switch (words[0], words.count) {
    case ("/quit", 1), ("/exit", 1): self = .quit
    case ("/reset", 1): self = .reset
    case ("/help", 1): self = .help
    case ("/mode", 1): self = .showMode
    case ("/mode", 2):
      if let mode = InferenceMode(rawValue: words[1]) {
        self = .mode(mode)
      } else {
        self = .invalid("unknown mode '\(words[1])' (expected \(InferenceMode.allNames))")
      }
    case ("/quit", _), ("/exit", _), ("/reset", _), ("/help", _), ("/mode", _):
      self = .invalid("usage: \(ChatInput.commandSummary)")
    default:
      self = .invalid("unknown command '\(words[0])' (commands: \(ChatInput.commandSummary))")
    }
  }

  /// The commands, in one line.
  public static let commandSummary = "/reset, /mode <\(InferenceMode.allNames)>, /help, /quit"
}
