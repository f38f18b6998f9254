import CHybridMTMD
import Foundation
import HybridInferenceCore

/// llama.cpp's multimodal library, libmtmd, opened at run time.
///
/// Never linked: a llama.cpp from a distribution may come without libmtmd,
/// and the library must still load there and serve text. It is opened when a
/// projector is first loaded: beside the libllama the process has loaded
/// (the copy built with it), else wherever the dynamic loader finds it.
/// Where it is missing, or lacks a function the library calls, loading a
/// projector throws ``HybridInferenceError/unsupportedRequest(_:)`` with the
/// reason, so a prefer-on-device hybrid answers from its other model.
///
/// `@unchecked Sendable`: the table `CHybridMTMD_open` returns is written
/// once, before it is returned, and only read afterwards; it is never freed,
/// since libmtmd stays loaded for the process.
final class MTMDLibrary: @unchecked Sendable {
  /// The table of libmtmd's functions (`CHybridMTMD_library`).
  let table: OpaquePointer
  /// The file it was opened from.
  let path: String

  private init(table: OpaquePointer) {
    self.table = table
    self.path = String(cString: CHybridMTMD_library_path(table))
  }

  /// The process's libmtmd, opened on first use (Swift initialises a static
  /// `let` once, thread-safely); the failure, with its reason, otherwise.
  static let shared: Result<MTMDLibrary, HybridInferenceError> = open(directory: nil)

  /// Opens libmtmd: with `directory`, only there (for tests: a directory
  /// without it stands for a llama.cpp without it); without, as ``shared``.
  /// Each successful call opens a table of its own.
  static func open(directory: String?) -> Result<MTMDLibrary, HybridInferenceError> {
    // libmtmd reaches into libllama: the backend is initialised first.
    LlamaBackend.ensureInitialized()
    var reason = [CChar](repeating: 0, count: 1024)
    guard let table = CHybridMTMD_open(directory, &reason, reason.count) else {
      let why = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      return .failure(.unsupportedRequest("images and sound on device need llama.cpp's libmtmd: \(why)"))
    }
    // Its log lines (and its image encoder's) join llama.cpp's, silent by default.
    CHybridMTMD_log_set(table, forwardMTMDLog, nil)
    return .success(MTMDLibrary(table: table))
  }

  /// The marker that stands for one image or sound in a prompt.
  var defaultMarker: String { String(cString: CHybridMTMD_default_marker(table)) }
}

/// The error lines libmtmd logs while a call is made on behalf of one
/// caller: libmtmd reports why it refused a projector only in its log.
///
/// Bound as a task-local (`collecting`) around the call, so that it only sees
/// the lines of that call: libmtmd logs synchronously, on the calling thread,
/// where the binding is visible (in a task or not), and calls made elsewhere
/// at the same time see no binding.
final class MTMDErrorLines: Sendable {
  /// The binding the log callback reads.
  @TaskLocal static var collecting: MTMDErrorLines?

  /// At most this many lines are kept (the last ones).
  private static let limit = 4
  private let lines = Locked<[String]>([])

  fileprivate func append(_ line: String) {
    lines.withLock { lines in
      lines.append(String(line.prefix(300)))
      if lines.count > Self.limit { lines.removeFirst() }
    }
  }

  /// The lines collected, in order, joined with "; "; nil when there were none.
  var summary: String? {
    lines.withLock { $0.isEmpty ? nil : $0.joined(separator: "; ") }
  }
}

/// The C callback libmtmd calls for each log line; levels as `ggml_log_level`.
private func forwardMTMDLog(level: Int32, text: UnsafePointer<CChar>?, userData: UnsafeMutableRawPointer?) {
  guard let text else { return }
  let message = String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
  guard !message.isEmpty else { return }
  if level == 4 { MTMDErrorLines.collecting?.append(message) }
  let logLevel: LogLevel =
    switch level {
    case 4: .error
    case 3: .warning
    case 2: .info
    default: .debug
    }
  LlamaBackend.logSink.current.log(
    LogRecord(level: logLevel, category: .llama, message: "libmtmd: \(message)"))
}
