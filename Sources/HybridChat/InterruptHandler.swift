import Dispatch
import Foundation
import Synchronization

/// Ctrl-C while something cancellable runs: in a chat it stops the answer in
/// progress and returns to the prompt (the session stays usable, the
/// unfinished turn is not kept); at the prompt it leaves, with the shell's
/// status for an interrupt (130). During a model download it cancels the
/// download, so the partial file is left ready to resume. A one-shot answer
/// is cancelled too, and the command then exits 130: the answer's way out
/// closes what it drew (dimmed thoughts), which ending the process at once
/// would leave the terminal in.
final class InterruptHandler {
  private let current = CurrentAnswer()
  private let source: any DispatchSourceSignal

  /// Starts catching SIGINT for as long as the handler lives.
  init(terminal: Terminal) {
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { [current] in current.interrupt(terminal) }
    source.resume()
  }

  deinit {
    source.cancel()
    signal(SIGINT, SIG_DFL)
  }

  /// Runs `body` as the work (an answer, a download) that Ctrl-C cancels.
  func runCancellable(_ body: @escaping @Sendable () async throws -> Void) async throws {
    let task = Task { try await body() }
    current.set(task)
    defer { current.set(nil) }
    try await task.value
  }
}

/// The answer Ctrl-C would cancel, shared with the signal handler's thread.
private final class CurrentAnswer: Sendable {
  private let task = Mutex<Task<Void, any Error>?>(nil)

  func set(_ newTask: Task<Void, any Error>?) {
    task.withLock { $0 = newTask }
  }

  func interrupt(_ terminal: Terminal) {
    if let running = task.withLock({ $0 }) {
      running.cancel()
    } else {
      terminal.writeError("\n")
      exit(130)
    }
  }
}
