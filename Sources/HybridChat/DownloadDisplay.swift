import HybridChatCore
import HybridInferenceDownload
import Synchronization

/// Shows a model download on stderr: on a terminal a `DownloadBar`, redrawn
/// at each progress the library reports (a few times a second); elsewhere
/// one line when it starts and one when it ends, so a log gets no carriage
/// returns.
final class DownloadDisplay: Sendable {
  /// What the display has seen. Behind a mutex: progress arrives on the
  /// downloading task, the end on the caller's.
  private struct State {
    var rate = TransferRate()
    /// The first byte count reported: what a resumed download found on disk.
    var firstBytes: Int64?
    var last: DownloadProgress?
    var drawn = false
    /// Whether the start line is out (stderr not a terminal).
    var announced = false
  }

  private let source: ModelSource
  private let fileName: String
  private let bar: DownloadBar
  private let terminal: Terminal
  private let clock = ContinuousClock()
  private let start: ContinuousClock.Instant
  private let state = Mutex(State())

  /// Starts showing the download of `source`, whose file is `fileName`.
  init(source: ModelSource, fileName: String, terminal: Terminal) {
    // The name comes from the command line: written as text, never obeyed.
    self.fileName = TerminalText.neutralized(fileName, keepingLineBreaks: false)
    self.bar = DownloadBar(fileName: self.fileName)
    self.terminal = terminal
    self.source = source
    start = clock.now
  }

  /// Records `progress`; redraws the bar on a terminal.
  func update(_ progress: DownloadProgress) {
    let time = clock.now - start
    let isTerminal = terminal.stderrIsTerminal
    let line: String? = state.withLock { state in
      state.rate.record(progress.completedBytes, at: time)
      if state.firstBytes == nil { state.firstBytes = progress.completedBytes }
      state.last = progress
      guard isTerminal else {
        defer { state.announced = true }
        return state.announced ? nil : announcement(progress)
      }
      state.drawn = true
      return bar.line(progress, bytesPerSecond: state.rate.bytesPerSecond)
    }
    guard let line else { return }
    if isTerminal { terminal.writeError(line) } else { terminal.errorLine(line) }
  }

  /// The start line, once the first progress shows the transfer under way
  /// (a source refused before any request gets only its error line).
  private func announcement(_ progress: DownloadProgress) -> String {
    let size = progress.totalBytes.map { " (\(ByteCount.text($0)))" } ?? ""
    let resumed = progress.completedBytes > 0 ? ", resuming at \(ByteCount.text(progress.completedBytes))" : ""
    return "hybrid-chat: downloading \(source)\(size)\(resumed)"
  }

  /// The download is done: erases the bar, or writes the closing line.
  func finish() {
    stop()
    guard !terminal.stderrIsTerminal else { return }
    let (first, last) = state.withLock { ($0.firstBytes ?? 0, $0.last?.completedBytes ?? 0) }
    let summary = DownloadBar.summary(fileName: fileName, size: last, moved: last - first, elapsed: clock.now - start)
    terminal.errorLine("hybrid-chat: " + summary)
  }

  /// Erases the bar, if it was drawn (the download stopped or failed).
  func stop() {
    let drawn = state.withLock { state in
      defer { state.drawn = false }
      return state.drawn
    }
    if drawn { terminal.writeError(bar.erase) }
  }
}
