import HybridChatCore
import Synchronization

/// Draws a `ProgressBar` on stderr while the on-device model loads.
///
/// llama.cpp reports progress from its loading thread, many times per
/// percent; the display redraws only when the whole percentage changes.
final class ProgressDisplay: Sendable {
  private let bar: ProgressBar
  private let terminal: Terminal
  private let lastPercent = Mutex<Int?>(nil)

  init(label: String, terminal: Terminal) {
    self.bar = ProgressBar(label: label)
    self.terminal = terminal
  }

  /// Draws the bar at `fraction` (0...1) if the percentage changed.
  func update(_ fraction: Double) {
    let percent = ProgressBar.percent(fraction)
    let changed = lastPercent.withLock { last in
      defer { last = percent }
      return last != percent
    }
    if changed { terminal.writeError(bar.line(fraction)) }
  }

  /// Erases the bar, if it was drawn.
  func finish() {
    let drawn = lastPercent.withLock { $0 != nil }
    if drawn { terminal.writeError(bar.erase) }
  }
}
