import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// The interactive chat: reads prompts and slash commands from the terminal
/// until `/quit` or end of input (Ctrl-D).
///
/// A failed answer prints its error line and the chat goes on; only leaving
/// ends it, with status 0.
struct ChatLoop {
  let chat: ChatSession
  let terminal: Terminal

  func run() async -> Int32 {
    let interrupts = InterruptHandler(terminal: terminal)
    terminal.errorLine(
      "\(HelpText.versionLine) · mode \(await chat.mode) · \(ChatInput.commandSummary)")
    while true {
      // The prompt marker goes to stderr, like a shell's, so stdout holds only answers.
      terminal.writeError("> ")
      guard let line = terminal.readLine() else {
        terminal.writeError("\n")
        return 0
      }
      switch ChatInput(line: line) {
      case .empty:
        continue
      case .quit:
        return 0
      case .help:
        terminal.errorLine("commands: \(ChatInput.commandSummary)")
      case .showMode:
        terminal.errorLine("mode: \(await chat.mode)")
      case .reset:
        await chat.reset()
        terminal.errorLine("hybrid-chat: the conversation is reset")
      case .mode(let mode):
        do {
          try await chat.switchMode(to: mode)
          terminal.errorLine("hybrid-chat: mode \(mode); the conversation goes on")
        } catch {
          terminal.errorLine(error.line)
        }
      case .invalid(let why):
        terminal.errorLine("hybrid-chat: \(why)")
      case .prompt(let prompt):
        do {
          try await interrupts.runCancellable { [chat] in
            try await chat.answer(prompt)
          }
        } catch is CancellationError {
          terminal.errorLine("hybrid-chat: stopped")
        } catch {
          terminal.errorLine(ErrorReport.commandError(for: error).line)
        }
      }
    }
  }
}
