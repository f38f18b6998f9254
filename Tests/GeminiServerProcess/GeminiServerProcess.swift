import Foundation

/// The repository's loopback Gemini server (Tests/GeminiServer/gemini_server.py)
/// as a child process: the one launcher the cloud tests, the CLI tests and the
/// cloud benchmark share.
///
/// The server binds a free port on 127.0.0.1 and prints it as its first line;
/// closing its stdin (or `stop()`) ends it, so a crashed test leaves nothing behind.
public final class GeminiServerProcess {
  /// The port the server listens on, on 127.0.0.1.
  public let port: Int
  /// `http://127.0.0.1:<port>`, the server's root (the API version follows).
  public let baseURL: URL
  private let process: Process
  private let stdin = Pipe()

  /// The repository root, found from this file's path.
  public static let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// Why the server did not start, with what it printed on stderr.
  public struct StartError: Error, CustomStringConvertible {
    /// What went wrong, with what the server printed.
    public let description: String
  }

  /// Starts the server, expecting `apiKey`, replaying fixtures from `fixtures`
  /// when given, on `port` (0: a free one); returns once it listens.
  public convenience init(apiKey: String, fixtures: URL? = nil, port: Int = 0) throws {
    try self.init(
      script: "Tests/GeminiServer/gemini_server.py",
      arguments: ["--api-key", apiKey, "--port", "\(port)"] + (fixtures.map { ["--fixtures", $0.path] } ?? []))
  }

  /// Starts another loopback stub that follows the same convention (the
  /// port on its first line, ending when its stdin closes), such as
  /// Tests/OpenAIServer/openai_stub.py.
  /// - Parameter script: The script's path from the repository root.
  public init(script: String, arguments: [String]) throws {
    let script = Self.repositoryRoot.appendingPathComponent(script)
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path] + arguments
    let stdout = Pipe()
    // A file, not a pipe: nobody reads stderr while the server runs, and a
    // full pipe would block it.
    let logURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("gemini-server-\(UUID().uuidString).log")
    _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
    let log = try FileHandle(forWritingTo: logURL)
    defer {
      try? log.close()
      try? FileManager.default.removeItem(at: logURL)
    }
    process.standardOutput = stdout
    process.standardInput = stdin
    process.standardError = log
    try process.run()
    var line = Data()
    while true {
      let byte = stdout.fileHandleForReading.readData(ofLength: 1)
      if byte.isEmpty || byte == Data("\n".utf8) { break }
      line.append(byte)
    }
    guard let port = Int(String(decoding: line, as: UTF8.self)),
      let baseURL = URL(string: "http://127.0.0.1:\(port)")
    else {
      process.terminate()
      process.waitUntilExit()
      let output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
      throw StartError(
        description: "the loopback server \(script.lastPathComponent) did not start (python3 is required): \(output)")
    }
    self.port = port
    self.baseURL = baseURL
  }

  /// Stops the server and waits for it to exit.
  public func stop() {
    if process.isRunning { process.terminate() }
    try? stdin.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  deinit { stop() }
}
