import Foundation

/// A loopback test server written in Python, run as a child process: the one
/// launcher behind `GeminiServerProcess` and `HubServerProcess`.
///
/// The convention every such script follows: it binds free ports on 127.0.0.1,
/// prints them as its first line of stdout (space-separated when there are
/// several), and ends when its stdin closes, so a crashed test leaves nothing
/// behind.
///
/// `@unchecked Sendable`: everything is set in `init` and never changes, but
/// for the ending, which `lock` serialises, so a server shared by a test
/// class may be stopped from any thread.
public final class LoopbackScriptProcess: @unchecked Sendable {
  /// The ports of the first line, in the order the script printed them.
  public let ports: [Int]
  private let process: Process
  private let stdin = Pipe()
  private let lock = NSLock()

  /// The repository root, found from this file's path.
  public static let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// Why the server did not start, with what it printed on stderr.
  public struct StartError: Error, CustomStringConvertible {
    /// What went wrong, with what the server printed.
    public let description: String
  }

  /// Starts `script` with python3 and returns once it has printed
  /// `portCount` ports.
  /// - Parameter script: The script's path from the repository root.
  public init(script: String, arguments: [String], portCount: Int = 1) throws {
    let script = Self.repositoryRoot.appendingPathComponent(script)
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path] + arguments
    let stdout = Pipe()
    // A file, not a pipe: nobody reads stderr while the server runs, and a
    // full pipe would block it.
    let logURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("loopback-server-\(UUID().uuidString).log")
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
    let ports = String(decoding: line, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
    guard ports.count == portCount, ports.allSatisfy({ (1...65535).contains($0) }) else {
      process.terminate()
      process.waitUntilExit()
      let output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
      throw StartError(
        description: "the loopback server \(script.lastPathComponent) did not start (python3 is required): \(output)")
    }
    self.ports = ports
  }

  /// Stops the server and waits for it to exit.
  public func stop() {
    lock.withLock {
      if process.isRunning { process.terminate() }
      try? stdin.fileHandleForWriting.close()
      process.waitUntilExit()
    }
  }

  deinit { stop() }
}
