import HybridChatCore
import HybridInferenceCore
import HybridInferenceDownload
import HybridInferenceLlama

/// Downloads a `--model` given as a source (`hf:...`, `https://...#sha256=`)
/// before the first answer, so that the answer's time does not include it
/// and a failed download is one error line before anything else runs.
///
/// Only a mode that may use the device downloads (an `only-cloud` run has
/// no use for the file), and only a file not on disk yet: a second run
/// finds it and goes straight to loading. Ctrl-C stops the download; the
/// library keeps its partial file and the next run asks for the rest.
enum ModelDownloadStep {
  /// How the step ended.
  enum Outcome {
    /// The file is on disk (or there was nothing to download).
    case ready
    /// Ctrl-C stopped the download; the command ends with status 130.
    case interrupted
  }

  /// The line printed when Ctrl-C stops a download.
  static let interruptedLine = "hybrid-chat: the download was interrupted; run the same command again to resume it"

  /// Downloads `local`'s file when `argument` is a source whose file is not
  /// on disk and `mode` may use the device.
  static func run(
    _ argument: ModelArgument?, local: LocalSystemModel, for mode: InferenceMode, terminal: Terminal
  ) async throws -> Outcome {
    guard mode.usesDevice, case .source(let source, let fileName)? = argument, local.modelPath.isEmpty,
      local.availability != .unavailable(.localInferenceNotEnabled)
    else { return .ready }
    let display = DownloadDisplay(source: source, fileName: fileName, terminal: terminal)
    // SIGINT cancels the download's task, rather than ending the process
    // mid-write, so the partial file and its record stay consistent.
    let interrupts = InterruptHandler(terminal: terminal)
    do {
      try await interrupts.runCancellable {
        do {
          for try await progress in local.download() { display.update(progress) }
        } catch  where Task.isCancelled {
          // The cancelled transfer may end with an error of its own; it is still an interrupt.
          throw CancellationError()
        }
        // A cancelled stream simply ends: that is not a finished download.
        try Task.checkCancellation()
      }
    } catch is CancellationError {
      display.stop()
      terminal.errorLine(interruptedLine)
      return .interrupted
    } catch {
      display.stop()
      throw error
    }
    display.finish()
    return .ready
  }
}
