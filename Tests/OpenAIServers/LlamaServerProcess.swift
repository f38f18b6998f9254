import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// llama.cpp's `llama-server` (built by scripts/setup-llama.sh) as a child
/// process on a free loopback port: the one launcher the OpenAI-compatible
/// tests and the benchmark share.
///
/// It runs under a small `sh` guard that polls this process: when this
/// process goes away for any reason (a failed test, a crash, SIGKILL), the
/// guard notices within 0.2 s and kills the server, so no server is
/// left behind. `stop()` terminates the guard, which stops the server and
/// waits for it.
///
/// (A guard that waits for its stdin to close cannot work: a non-interactive
/// shell gives a background job /dev/null as stdin, so its `read` returns at
/// once. And `Process.waitUntilExit()` spins a CPU on a thread without a run
/// loop, so `stop()` polls instead.)
public final class LlamaServerProcess: @unchecked Sendable {
  // @unchecked: `process` is set once in `init`; `stop()` only calls
  // methods Foundation makes safe to call from any thread.
  /// The port the server listens on, on 127.0.0.1.
  public let port: Int
  /// `http://127.0.0.1:<port>/v1`, the OpenAI-compatible API root.
  public let baseURL: URL
  private let process: Process
  private let logURL: URL

  /// Why the server could not start; `isMissingBinary` when llama-server
  /// is not there at all (a missing prerequisite, not a failure of its own).
  public struct StartError: Error, CustomStringConvertible {
    /// What went wrong, with the end of the server's log where it has one.
    public let description: String
    /// Whether no llama-server binary was found.
    public let isMissingBinary: Bool
  }

  /// `HYBRID_LLAMA_SERVER`, else `bin/llama-server` in the llama.cpp prefix
  /// the set-up builds, else `llama-server` on the PATH; nil when none exists.
  public static var binaryPath: String? {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["HYBRID_LLAMA_SERVER"], !path.isEmpty { return path }
    let cache =
      environment["HYBRID_INFERENCE_CACHE"]
      ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/hybrid-inference")
    var candidates = [cache + "/llama.cpp-0.3.36/bin/llama-server"]
    if let prefix = environment["PKG_CONFIG_PATH"]?.split(separator: ":").first {
      // .../lib/pkgconfig -> .../bin/llama-server
      candidates.insert(
        URL(fileURLWithPath: String(prefix)).deletingLastPathComponent().deletingLastPathComponent()
          .appendingPathComponent("bin/llama-server").path, at: 0)
    }
    for directory in (environment["PATH"] ?? "").split(separator: ":") {
      candidates.append(String(directory) + "/llama-server")
    }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// Starts llama-server with `model`, `parallel` slots (`-np`) sharing a
  /// context of `contextSize` tokens, and returns once `/health` answers 200.
  /// - Parameters:
  ///   - alias: The model name the server reports (`--alias`).
  ///   - threads: Threads for generation.
  ///   - extraArguments: More llama-server flags (`--jinja`, ...).
  public init(
    model: String, alias: String = "fleet-model", parallel: Int = 1, contextSize: Int = 2048,
    threads: Int = 2, extraArguments: [String] = [], startTimeout: Duration = .seconds(60)
  ) async throws {
    guard let binary = Self.binaryPath else {
      throw StartError(
        description: "llama-server not found (scripts/setup-llama.sh builds it; or set HYBRID_LLAMA_SERVER)",
        isMissingBinary: true)
    }
    let port = try Self.freePort()
    logURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("llama-server-\(UUID().uuidString).log")
    _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
    let log = try FileHandle(forWritingTo: logURL)
    defer { try? log.close() }
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    // $0 is the binary, "$@" its arguments, $PPID this process. The guard
    // ends with the server, and ends the server (waiting for it) when this
    // process is gone or the guard is terminated. SIGKILL, not SIGTERM: a
    // test server keeps nothing, and on SIGTERM llama-server waits about 5 s
    // for idle keep-alive connections to time out.
    let guardScript = #"""
      "$0" "$@" </dev/null & p=$!
      trap 'kill -9 $p 2>/dev/null; wait $p; exit 0' EXIT TERM
      while kill -0 $p 2>/dev/null && kill -0 $PPID 2>/dev/null; do sleep 0.2; done
      """#
    process.arguments =
      [
        "-c", guardScript, binary, "-m", model, "--alias", alias, "--host", "127.0.0.1",
        "--port", "\(port)", "-np", "\(parallel)", "-c", "\(contextSize)", "-t", "\(threads)",
        "--no-webui",
      ] + extraArguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = log
    process.standardError = log
    try process.run()
    self.port = port
    guard let baseURL = URL(string: "http://127.0.0.1:\(port)/v1") else {
      throw StartError(description: "no URL for port \(port)", isMissingBinary: false)
    }
    self.baseURL = baseURL
    let deadline = ContinuousClock.now + startTimeout
    while ContinuousClock.now < deadline {
      if !process.isRunning { break }
      if await Self.isHealthy(port: port) { return }
      try await Task.sleep(for: .milliseconds(100))
    }
    let output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    stop()
    throw StartError(
      description: "llama-server did not become healthy: \(output.suffix(2000))", isMissingBinary: false)
  }

  /// Stops the server (through its guard) and waits for the guard to exit.
  public func stop() {
    if process.isRunning { process.terminate() }
    let deadline = ContinuousClock.now + .seconds(10)
    while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    try? FileManager.default.removeItem(at: logURL)
  }

  deinit { stop() }

  /// Whether `GET /health` answers 200 (llama-server answers 503 while it
  /// loads). A plain socket rather than URLSession: the check runs before the
  /// test's own sessions exist and must never hang on a half-started server.
  static func isHealthy(port: Int) async -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
    guard connected else { return false }
    let request = Array("GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard send(descriptor, request, request.count, 0) == request.count else { return false }
    var buffer = [UInt8](repeating: 0, count: 64)
    let received = recv(descriptor, &buffer, buffer.count, 0)
    guard received > 0 else { return false }
    let statusLine = String(decoding: buffer.prefix(received), as: UTF8.self)
    return statusLine.hasPrefix("HTTP/1.1 200") || statusLine.hasPrefix("HTTP/1.0 200")
  }

  /// A loopback port that was free a moment ago (bound to 0, then closed).
  public static func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw StartError(description: "socket() failed", isMissingBinary: false) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let port = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int in
        guard bind(descriptor, raw, length) == 0, getsockname(descriptor, raw, &length) == 0 else {
          return 0
        }
        return Int(UInt16(bigEndian: pointer.pointee.sin_port))
      }
    }
    guard port != 0 else { throw StartError(description: "no free port", isMissingBinary: false) }
    return port
  }
}
