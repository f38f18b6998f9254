import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceJinja
import Synchronization

/// The process-wide side of llama.cpp: its one-time initialisation and its log.
///
/// Both are global in llama.cpp itself (`llama_backend_init`, `llama_log_set`),
/// so they are global here, behind a once-only initialiser and a lock.
enum LlamaBackend {
  /// Runs `llama_backend_init` exactly once: Swift initialises a static `let`
  /// once, thread-safely, on first use.
  private static let initialized: Bool = {
    llama_log_set(forwardLog, nil)
    llama_backend_init()
    return true
  }()

  /// The generations running now, so that exit can stop them first.
  static let inFlight = InFlightWork()

  /// Where llama.cpp's log lines go; silent until an app says otherwise.
  static let logSink = LogSink()

  /// Initialises llama.cpp if it has not been yet.
  static func ensureInitialized() {
    _ = initialized
  }

  /// Counts running llama.cpp work (model loads, context creation,
  /// generations); at exit, asks it to stop and waits.
  ///
  /// An app may exit while llama.cpp is working; ggml's C++ statics are then
  /// destroyed under the running computation and the process can crash on
  /// its way out. An `atexit` handler stops the work first. Handlers and
  /// static destructors run in reverse order of registration, and ggml
  /// creates some statics lazily, during its first computations, so the
  /// handler is registered twice: when the first work starts (covering an
  /// exit during the first load or generation) and when it first ends (after
  /// every static a generation uses exists). Stopping is idempotent.
  final class InFlightWork: Sendable {
    private let running = Locked<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let registeredAtStart = Atomic<Bool>(false)
    private let registeredAtEnd = Atomic<Bool>(false)

    /// True once the process is exiting: all work treats it as a cancellation.
    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    func enter() {
      if !registeredAtStart.exchange(true, ordering: .relaxed) {
        atexit { LlamaBackend.inFlight.stopAndWait() }
      }
      running.withLock { $0 += 1 }
    }

    func leave() {
      running.withLock { $0 -= 1 }
      if !registeredAtEnd.exchange(true, ordering: .relaxed) {
        atexit { LlamaBackend.inFlight.stopAndWait() }
      }
    }

    /// Stops all work and waits for it to return (a token, a compute step or
    /// a load's next progress report each), at most two seconds.
    func stopAndWait() {
      stopping.store(true, ordering: .relaxed)
      for _ in 0..<2000 where running.withLock({ $0 }) > 0 {
        usleep(1000)
      }
    }
  }

  /// The current log handler, behind a lock because llama.cpp logs from any thread.
  final class LogSink: Sendable {
    private let handler = Locked<LogHandler>(.silent)

    var current: LogHandler {
      get { handler.withLock { $0 } }
      set { handler.withLock { $0 = newValue } }
    }
  }
}

/// The C callback llama.cpp calls for each log line.
private func forwardLog(
  level: ggml_log_level, text: UnsafePointer<CChar>?, userData: UnsafeMutableRawPointer?
) {
  guard let text else { return }
  let message = String(cString: text).trimmingCharacters(in: .newlines)
  guard !message.isEmpty else { return }
  let logLevel: LogLevel =
    switch level {
    case GGML_LOG_LEVEL_ERROR: .error
    case GGML_LOG_LEVEL_WARN: .warning
    case GGML_LOG_LEVEL_INFO: .info
    default: .debug
    }
  LlamaBackend.logSink.current.log(
    LogRecord(level: logLevel, category: .llama, message: "llama.cpp: \(message)"))
}
