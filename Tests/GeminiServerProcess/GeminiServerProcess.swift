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
  private let process: LoopbackScriptProcess

  /// The repository root, found from this file's path.
  public static let repositoryRoot = LoopbackScriptProcess.repositoryRoot

  /// Why the server did not start, with what it printed on stderr.
  public typealias StartError = LoopbackScriptProcess.StartError

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
    process = try LoopbackScriptProcess(script: script, arguments: arguments)
    port = process.ports[0]
    guard let baseURL = URL(string: "http://127.0.0.1:\(port)") else {
      process.stop()
      throw StartError(description: "\(script) printed port \(port), which makes no URL")
    }
    self.baseURL = baseURL
  }

  /// Stops the server and waits for it to exit.
  public func stop() { process.stop() }
}
