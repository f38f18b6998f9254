import Foundation
import HybridInferenceCore

/// Switches `perf record` / `perf stat` on and off around the part of a
/// benchmark being looked at (a decode, not the prefill before it), when
/// `HI_PERF_CTL` names perf's control FIFO:
///
///   mkfifo /tmp/ctl; HI_PERF_CTL=/tmp/ctl perf stat -D -1 --control fifo:/tmp/ctl local-benchmark ...
///
/// Without it, both calls do nothing. Locked: the handle is opened once, by
/// whichever task gets there first.
enum PerfControl {
  private static let handle = Locked<FileHandle?>(nil)

  static func enable() { send("enable\n") }
  static func disable() { send("disable\n") }

  private static func send(_ command: String) {
    guard let path = ProcessInfo.processInfo.environment["HI_PERF_CTL"] else { return }
    handle.withLock { handle in
      if handle == nil { handle = FileHandle(forWritingAtPath: path) }
      handle?.write(Data(command.utf8))
    }
  }
}
