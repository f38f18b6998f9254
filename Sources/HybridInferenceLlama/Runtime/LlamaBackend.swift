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
  /// once, thread-safely, on first use. Then, for a llama.cpp whose backends
  /// are modules that init found none of, loads them from beside libggml
  /// (`BackendModules`).
  private static let initialized: Bool = {
    llama_log_set(forwardLog, nil)
    llama_backend_init()
    if let directory = BackendModules.loadIfNone() {
      logSink.current.log(
        LogRecord(
          level: .info, category: .local,
          message: "llama.cpp backends loaded from \(directory): \(BackendModules.registered().joined(separator: ", "))"
        ))
    }
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

    /// Counts the caller's work in. Once the process is exiting it never
    /// returns: exit stops the work running when it starts, waits for it,
    /// then destroys ggml's statics, so work starting after that (a load
    /// that finished just as the exit began, whose caller went on to make a
    /// context) would read freed memory. The parked thread ends with the process.
    func enter() {
      if !registeredAtStart.exchange(true, ordering: .relaxed) {
        // Made first, so their destructors run after the handler (reverse order).
        LlamaBackend.makeLazyStatics()
        atexit { LlamaBackend.inFlight.stopAndWait() }
      }
      // Under the count's lock, as `stopAndWait` sets `stopping`: the work is
      // either counted before the exit looks, or sees it.
      while !running.withLock({ count -> Bool in
        guard !stopping.load(ordering: .relaxed) else { return false }
        count += 1
        return true
      }) {
        sleep(60)
      }
    }

    /// `body`, counted as work (`enter`, `leave`): for the short llama.cpp
    /// calls made outside a load, a context or a generation.
    func tracked<Value>(_ body: () -> Value) -> Value {
      enter()
      defer { leave() }
      return body()
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
      running.withLock { _ in stopping.store(true, ordering: .relaxed) }
      for _ in 0..<2000 where running.withLock({ $0 }) > 0 {
        usleep(1000)
      }
    }
  }

  /// Makes the function-local statics ggml creates on first use and a load
  /// reads: the backend registry (its vectors of backends and devices), and
  /// each backend's extra buffer types and feature list.
  ///
  /// Why: `atexit` handlers and C++ static destructors run in the reverse
  /// order of their registration. Were the registry first made during the
  /// first load, after `InFlightWork`'s handler was registered, an exit
  /// mid-load would destroy it before the handler stopped the load, and the
  /// load's next `ggml_backend_reg_get_proc_address` would read freed memory
  /// (a SIGSEGV in libggml-base; `ExitDuringWorkTests.testExitWhileTheRegistryIsRead`).
  static func makeLazyStatics() {
    ensureInitialized()
    for index in 0..<ggml_backend_reg_count() {
      guard let registry = ggml_backend_reg_get(index) else { continue }
      if let address = ggml_backend_reg_get_proc_address(registry, "ggml_backend_get_features") {
        _ = unsafeBitCast(address, to: ggml_backend_get_features_t.self)(registry)
      }
    }
    for index in 0..<ggml_backend_dev_count() {
      guard let device = ggml_backend_dev_get(index), let registry = ggml_backend_dev_backend_reg(device),
        let address = ggml_backend_reg_get_proc_address(registry, "ggml_backend_dev_get_extra_bufts")
      else { continue }
      _ = unsafeBitCast(address, to: ggml_backend_dev_get_extra_bufts_t.self)(device)
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
