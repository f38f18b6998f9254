import Foundation
import HybridChatCore
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// `hybrid-chat`: answers a prompt on device or in the cloud, or chats.
///
/// Every failure ends here as one line on stderr and a non-zero status (see
/// `CommandError`): no stack trace, no crash.
@main
enum HybridChat {
  static func main() async {
    exit(await run(Array(CommandLine.arguments.dropFirst())))
  }

  static func run(_ arguments: [String]) async -> Int32 {
    let terminal = Terminal()
    do {
      switch try ArgumentParser.parse(arguments) {
      case .help:
        terminal.write(HelpText.usage + "\n")
        return 0
      case .version:
        terminal.write(HelpText.versionLine + "\n")
        return 0
      case .devices:
        LocalSystemModel.setLlamaLogHandler(.silent)
        terminal.write(DeviceListing.text(for: LocalSystemModel.computeDevices))
        return 0
      case .chat(let options):
        return try await chat(options, terminal: terminal)
      }
    } catch {
      let failure = ErrorReport.commandError(for: error)
      terminal.errorLine(failure.line)
      return failure.exitCode
    }
  }

  private static func chat(_ options: ChatOptions, terminal: Terminal) async throws -> Int32 {
    // llama.cpp's log is process-wide and chatty; the command's output is
    // the answer and its one report line.
    LocalSystemModel.setLlamaLogHandler(.silent)
    // The prompt first: an empty one is a usage error before anything loads.
    let source = try PromptSource.resolve(
      argumentPrompt: options.prompt, stdinIsTerminal: terminal.stdinIsTerminal,
      readStandardInput: terminal.readAll)
    let images = try ImageFile.load(options.imagePaths)
    let recorder = FallbackRecorder()
    let logHandler = ChatLogging.handler(recorder: recorder, terminal: terminal, json: options.json)
    let catalog = ModelCatalog(options: options, logHandler: logHandler)
    let mode = options.mode ?? catalog.defaultMode
    // Before the mode's model is checked: a model to download is not ready until then.
    if try await ModelDownloadStep.run(options.model, local: catalog.local, for: mode, terminal: terminal)
      == .interrupted
    {
      return 130
    }
    let model = try catalog.model(for: mode)
    try await ModelPreparation.prepare(catalog, for: mode, terminal: terminal)
    let chat = ChatSession(
      catalog: catalog, mode: mode, model: model, options: options, logHandler: logHandler,
      recorder: recorder, terminal: terminal, firstAttachments: images)
    switch source {
    case .oneShot(let prompt):
      // Ctrl-C cancels the answer rather than ending the process at once, so
      // that thoughts drawn faint are closed and the terminal is left at
      // normal intensity; the status is still the shell's for an interrupt.
      let interrupts = InterruptHandler(terminal: terminal)
      do {
        try await interrupts.runCancellable { try await chat.answer(prompt) }
      } catch is CancellationError {
        return 130
      }
      return 0
    case .interactive:
      return await ChatLoop(chat: chat, terminal: terminal).run()
    }
  }
}
