/// Where the prompt comes from: the arguments, piped stdin, or a chat.
public enum PromptSource: Sendable, Hashable {
  /// Answer this prompt, then exit.
  case oneShot(String)
  /// Read prompts from the terminal until `/quit` or end of input.
  case interactive

  /// Decides the source: arguments win; otherwise a terminal on stdin means a
  /// chat and anything else (a pipe, a file) holds the prompt.
  /// - Parameters:
  ///   - argumentPrompt: The prompt words from the command line, if any.
  ///   - stdinIsTerminal: Whether stdin is a terminal (`isatty`).
  ///   - readStandardInput: Reads all of stdin; called only when needed.
  /// - Throws: A usage error when the prompt is empty or only whitespace.
  public static func resolve(
    argumentPrompt: String?, stdinIsTerminal: Bool, readStandardInput: () -> String
  ) throws(CommandError) -> PromptSource {
    if let argumentPrompt {
      guard !isBlank(argumentPrompt) else { throw .usage("the prompt is empty") }
      return .oneShot(argumentPrompt)
    }
    if stdinIsTerminal { return .interactive }
    // A piped prompt nearly always ends in a newline the user never meant to send.
    let piped = readStandardInput().trimmingWhitespace()
    guard !piped.isEmpty else { throw .usage("the prompt is empty (nothing was read from stdin)") }
    return .oneShot(piped)
  }

  static func isBlank(_ text: String) -> Bool {
    text.allSatisfy { $0.isWhitespace }
  }
}

extension String {
  /// The string without leading and trailing whitespace and newlines.
  func trimmingWhitespace() -> String {
    guard let first = firstIndex(where: { !$0.isWhitespace }),
      let last = lastIndex(where: { !$0.isWhitespace })
    else { return "" }
    return String(self[first...last])
  }
}
