import Foundation
import HybridChatCore

/// The process's standard streams, and whether they are terminals.
///
/// Everything goes through unbuffered writes to the file descriptors (never
/// `print`), so streamed text and the stderr lines appear in the order they
/// were produced.
struct Terminal: Sendable {
  /// Whether stdin is a terminal: decides between a chat and a piped prompt.
  let stdinIsTerminal = isatty(STDIN_FILENO) == 1
  /// Whether stdout is a terminal: thoughts share it, dimmed, only then.
  let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
  /// Whether stderr is a terminal: the progress bar is drawn only there.
  let stderrIsTerminal = isatty(STDERR_FILENO) == 1

  /// Writes `text` to stdout as is: for the command's own text.
  func write(_ text: String) {
    try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
  }

  /// Writes a model's text to stdout with its control characters, other
  /// than line feed and tab, made visible (`TerminalText`): an answer must
  /// not be able to drive the terminal.
  func writeAnswer(_ text: some StringProtocol) {
    write(TerminalText.neutralized(text))
  }

  /// Writes `text` as is to `destination`.
  func write(_ text: String, to destination: ThoughtDisplay.Destination) {
    guard !text.isEmpty else { return }
    switch destination {
    case .standardOutput: write(text)
    case .standardError: writeError(text)
    }
  }

  /// Writes `text` to stderr as is (no newline added).
  func writeError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
  }

  /// Writes one line to stderr, control characters made visible: its text
  /// often quotes a server (an error, a model name, a fallback's reason).
  func errorLine(_ line: String) {
    writeError(TerminalText.neutralized(line) + "\n")
  }

  /// Reads one line from stdin, nil at end of input.
  func readLine() -> String? {
    Swift.readLine(strippingNewline: true)
  }

  /// Reads all of stdin (a piped prompt).
  func readAll() -> String {
    let data = (try? FileHandle.standardInput.readToEnd()) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }
}
