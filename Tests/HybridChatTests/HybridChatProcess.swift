import Foundation
import XCTest

/// Runs the built `hybrid-chat` binary, for the end-to-end tests.
///
/// The binary is a product of this package: `swift build --build-tests` (what
/// `make test` runs) and plain `swift test` build it next to the test bundle,
/// in the products directory. `HYBRID_CHAT_BINARY` names another one.
enum HybridChatProcess {
  /// What one run produced.
  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The stderr lines, without the empty one after the last newline.
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
  }

  static let environment = ProcessInfo.processInfo.environment

  /// The products directory: on Linux the test runner is an executable there.
  static var productsDirectory: URL {
    #if os(macOS)
      if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
        return bundle.bundleURL.deletingLastPathComponent()
      }
    #endif
    return Bundle.main.bundleURL
  }

  static var binary: URL {
    if let path = environment["HYBRID_CHAT_BINARY"] { return URL(fileURLWithPath: path) }
    return productsDirectory.appendingPathComponent("hybrid-chat")
  }

  /// The tiny random-weight model that `make test` generates.
  static var tinyModel: String {
    if let path = environment["HYBRID_TEST_TINY_MODEL"], !path.isEmpty { return path }
    let cache =
      environment["HYBRID_INFERENCE_CACHE"]
      ?? environment["XDG_CACHE_HOME"].map { $0 + "/hybrid-inference" }
      ?? NSHomeDirectory() + "/.cache/hybrid-inference"
    return cache + "/models/tiny-random-llama.gguf"
  }

  /// The tiny random-weight model that reads images, and its projector:
  /// `make test` generates both beside the tiny model.
  static var tinyVisionModel: (model: String, projector: String) {
    let models = URL(fileURLWithPath: tinyModel).deletingLastPathComponent().path
    let cache =
      environment["HYBRID_INFERENCE_CACHE"]
      ?? environment["XDG_CACHE_HOME"].map { $0 + "/hybrid-inference" }
      ?? NSHomeDirectory() + "/.cache/hybrid-inference"
    let folder = FileManager.default.fileExists(atPath: models + "/tiny-random-llava.gguf") ? models : cache + "/models"
    return (folder + "/tiny-random-llava.gguf", folder + "/tiny-random-llava-mmproj.gguf")
  }

  /// Fails the test (rather than skipping it) when the binary or the tiny
  /// model is missing: `make test` provides both.
  static func requireBinary() throws {
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
      XCTFail("no hybrid-chat at \(binary.path): run `swift build --build-tests` (or `make test`)")
      throw XCTSkip("binary missing")
    }
  }

  static func requireTinyModel() throws -> String {
    guard FileManager.default.fileExists(atPath: tinyModel) else {
      XCTFail("missing \(tinyModel): run `make test`, which provisions the test models")
      throw XCTSkip("model missing")
    }
    return tinyModel
  }

  /// Runs `executable` (the binary by default) with `arguments`.
  /// - Parameters:
  ///   - stdin: What stdin holds; nil means `/dev/null` (not a terminal, empty).
  ///   - environment: Added to the test's own environment, from which the
  ///     cloud keys and the switches that change routing are removed first.
  static func run(
    _ arguments: [String], executable: URL? = nil, stdin: String? = nil,
    environment extra: [String: String] = [:], timeout: TimeInterval = 120
  ) throws -> Result {
    try start(arguments, executable: executable, stdin: stdin, environment: extra).wait(timeout: timeout)
  }

  /// Starts the binary as `run` does, without waiting: for a test that
  /// signals it while it runs.
  /// - Parameter typing: Whether stdin stays open for `Running.type(_:)`
  ///   (then `stdin` is ignored).
  static func start(
    _ arguments: [String], executable: URL? = nil, stdin: String? = nil,
    environment extra: [String: String] = [:], typing: Bool = false
  ) throws -> Running {
    let process = Process()
    process.executableURL = executable ?? binary
    process.arguments = arguments
    var environment = Self.environment
    for name in [
      "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "HYBRID_LOCAL_MODEL",
      "HYBRID_INFERENCE_DISABLE_LOCAL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_VERTEX_BASE_URL",
      "GOOGLE_OAUTH_ACCESS_TOKEN", "GCE_METADATA_HOST",
    ] {
      environment.removeValue(forKey: name)
    }
    environment.merge(extra) { $1 }
    process.environment = environment

    // Files, not pipes: nothing can block on a full pipe buffer.
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("hybrid-chat-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let input = Pipe()
    let running = Running(
      process: process, arguments: arguments, directory: directory,
      input: typing ? input.fileHandleForWriting : nil)
    try Data().write(to: running.outURL)
    try Data().write(to: running.errURL)
    let out = try FileHandle(forWritingTo: running.outURL)
    let err = try FileHandle(forWritingTo: running.errURL)
    defer {
      try? out.close()
      try? err.close()
    }
    process.standardOutput = out
    process.standardError = err
    process.standardInput = stdin == nil && !typing ? FileHandle.nullDevice : input

    try process.run()
    if let stdin, !typing {
      try input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
      try input.fileHandleForWriting.close()
    }
    return running
  }

  /// A started binary, its output going to files.
  struct Running {
    let process: Process
    let arguments: [String]
    let directory: URL
    /// Stdin, open, when started `typing`.
    let input: FileHandle?
    var outURL: URL { directory.appendingPathComponent("stdout") }
    var errURL: URL { directory.appendingPathComponent("stderr") }

    /// What stdout holds so far.
    var stdoutSoFar: String {
      String(decoding: (try? Data(contentsOf: outURL)) ?? Data(), as: UTF8.self)
    }

    /// Writes `text` to stdin (started `typing`).
    func type(_ text: String) throws {
      try input?.write(contentsOf: Data(text.utf8))
    }

    /// Sends `signal` to the process.
    func signal(_ signal: Int32) {
      kill(process.processIdentifier, signal)
    }

    /// Waits for the end (killing it after `timeout`) and collects its output.
    func wait(timeout: TimeInterval = 120) throws -> Result {
      defer {
        try? input?.close()
        try? FileManager.default.removeItem(at: directory)
      }
      let deadline = Date().addingTimeInterval(timeout)
      while process.isRunning && Date() < deadline { usleep(20_000) }
      if process.isRunning {
        process.terminate()
        process.waitUntilExit()
        XCTFail("hybrid-chat \(arguments) ran past \(timeout) s")
      }
      process.waitUntilExit()
      return Result(
        status: process.terminationStatus,
        stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
        stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
  }
}
