import CLlama
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

  /// Where llama.cpp's log lines go; silent until an app says otherwise.
  static let logSink = LogSink()

  /// Initialises llama.cpp if it has not been yet.
  static func ensureInitialized() {
    _ = initialized
  }

  /// The current log handler, behind a lock because llama.cpp logs from any thread.
  final class LogSink: Sendable {
    private let handler = Mutex<LogHandler>(.silent)

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
