import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// llama.cpp's `llama-server` (built by scripts/setup-llama.sh) as a child
/// process on a loopback port it chooses itself: the one launcher the
/// OpenAI-compatible tests and the benchmark share.
///
/// The server is started with `--port 0`, binds a free port and logs
/// "listening on http://127.0.0.1:PORT"; the port is read from there. A port
/// found free here, closed and handed to the server could be taken by
/// another process in between (two tests starting servers at once).
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

  /// `HYBRID_LLAMA_SERVER`, else `bin/llama-server` beside the first
  /// `PKG_CONFIG_PATH` entry, else in the llama.cpp prefix scripts/common.sh
  /// names (the set-up's, where the pinned version lives), else `llama-server`
  /// on the PATH; nil when none exists.
  public static var binaryPath: String? {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["HYBRID_LLAMA_SERVER"], !path.isEmpty { return path }
    func executable(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }
    if let prefix = environment["PKG_CONFIG_PATH"]?.split(separator: ":").first {
      // .../lib/pkgconfig -> .../bin/llama-server
      let path = URL(fileURLWithPath: String(prefix)).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("bin/llama-server").path
      if executable(path) { return path }
    }
    // Reading the set-up's prefix starts bash: only when the entry above has no binary.
    if let prefix = setUpPrefix, executable(prefix + "/bin/llama-server") { return prefix + "/bin/llama-server" }
    return (environment["PATH"] ?? "").split(separator: ":").map { String($0) + "/llama-server" }
      .first(where: executable)
  }

  /// `LLAMA_PREFIX` as scripts/common.sh computes it (from the pinned
  /// version, `PREFIX` and the cache folder), read by sourcing it, so the
  /// version is written in one place; nil without bash or the script.
  public static let setUpPrefix: String? = {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("scripts/common.sh").path
    guard FileManager.default.fileExists(atPath: script) else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", #". "$1" && printf '%s' "$LLAMA_PREFIX""#, "bash", script]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    let prefix = String(decoding: data, as: UTF8.self)
    return prefix.isEmpty ? nil : prefix
  }()

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
        "--port", "0", "-np", "\(parallel)", "-c", "\(contextSize)", "-t", "\(threads)", "--no-webui",
      ] + extraArguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = log
    process.standardError = log
    try process.run()
    let deadline = ContinuousClock.now + startTimeout
    var port: Int?
    while port == nil, process.isRunning, ContinuousClock.now < deadline {
      port = Self.listeningPort(inLog: (try? String(contentsOf: logURL, encoding: .utf8)) ?? "")
      if port == nil { try await Task.sleep(for: .milliseconds(20)) }
    }
    self.port = port ?? 0
    baseURL = URL(string: "http://127.0.0.1:\(self.port)/v1") ?? URL(fileURLWithPath: "/")
    if let port {
      while ContinuousClock.now < deadline {
        if !process.isRunning { break }
        if await Self.isHealthy(port: port) { return }
        try await Task.sleep(for: .milliseconds(100))
      }
    }
    let output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    stop()
    throw StartError(
      description: "llama-server did not \(port == nil ? "say which port it listens on" : "become healthy"): "
        + "\(output.suffix(2000))", isMissingBinary: false)
  }

  /// The port of llama-server's "listening on http://127.0.0.1:PORT" log
  /// line, once the whole line is there.
  public static func listeningPort(inLog log: String) -> Int? {
    guard let start = log.range(of: "listening on http://127.0.0.1:")?.upperBound else { return nil }
    let digits = log[start...].prefix { $0.isASCII && $0.isNumber }
    guard digits.endIndex < log.endIndex, log[digits.endIndex].isNewline else { return nil }
    return Int(digits)
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
}
