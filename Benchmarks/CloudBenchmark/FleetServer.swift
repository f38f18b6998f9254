import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `cloud-benchmark fleet-server`: a loopback HTTP/1.1 server that answers
/// every POST with one recorded body, cheaply enough that 128 requests in
/// flight measure the client, not the server.
///
/// Why not the test suite's Python server for this: it runs a thread per
/// connection under the GIL, so at 128 in flight its queue set the median
/// (the lab log in Benchmarks/history/, "Remote clients at scale"). This one is a blocking thread per
/// connection with no interpreter: a request costs two or three syscalls and
/// a copy of a fixed answer (its CPU per request is printed beside the
/// figures). It runs as its own process (this binary, `fleet-server`) so its
/// CPU is not the client's and is read from /proc.
///
/// `/chat/completions` gets an OpenAI-compatible answer, anything else a
/// recorded Gemini `generateContent` answer
/// (`unary-success-basic-reply-short.json` of the fixtures when
/// `HYBRID_GEMINI_FIXTURES` names them, else the same reply compacted here).
/// The port is printed as the first line; a line on stdin is answered with
/// the server's CPU time so far (ms); closing stdin ends the server.
enum FleetServer {
  static let geminiAnswer = #"""
    {"candidates":[{"content":{"parts":[{"text":"Google's headquarters, also known as the Googleplex, is located in **Mountain View, California**.\n"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":22,"totalTokenCount":29},"modelVersion":"gemini-2.0-flash"}
    """#
  static let openAIAnswer = #"""
    {"id":"chatcmpl-fleet","object":"chat.completion","created":1,"model":"fleet-model","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}
    """#

  static func serve() throws -> Never {
    signal(SIGPIPE, SIG_IGN)
    var gemini = Data(geminiAnswer.utf8)
    if let fixtures = ProcessInfo.processInfo.environment["HYBRID_GEMINI_FIXTURES"],
      let recorded = FileManager.default.contents(
        atPath: fixtures + "/googleai/unary-success-basic-reply-short.json")
    {
      gemini = recorded
    }
    let answers = Answers(gemini: response(gemini), openAI: response(Data(openAIAnswer.utf8)))
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw BenchmarkError("fleet-server: socket failed") }
    var one: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(listener, pointer, length) == 0 && listen(listener, 4096) == 0
          && getsockname(listener, pointer, &length) == 0
      }
    }
    guard bound else { throw BenchmarkError("fleet-server: bind/listen failed, errno \(errno)") }
    FileHandle.standardOutput.write(Data("\(UInt16(bigEndian: address.sin_port))\n".utf8))
    let acceptor = Thread {
      while true {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { continue }
        var noDelay: Int32 = 1
        setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let thread = Thread { Connection(fd: connection, answers: answers).run() }
        thread.stackSize = 256 * 1024
        thread.start()
      }
    }
    acceptor.start()
    // Each line on stdin asks for the server's CPU time so far; the parent
    // closes stdin (or dies): the server ends with it.
    while readLine() != nil {
      FileHandle.standardOutput.write(Data("\(ProcessCPU.own)\n".utf8))
    }
    exit(0)
  }

  /// A whole HTTP response carrying `body`.
  private static func response(_ body: Data) -> [UInt8] {
    let head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
      + "Connection: keep-alive\r\n\r\n"
    return Array(head.utf8) + Array(body)
  }

  struct Answers: Sendable {
    let gemini: [UInt8]
    let openAI: [UInt8]
  }

  /// One keep-alive connection: read a head, its body (`Content-Length`),
  /// write the answer, until the client closes.
  struct Connection {
    let fd: Int32
    let answers: Answers

    func run() {
      defer { close(fd) }
      var buffer: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 64 * 1024)
      while true {
        // Until the head is whole.
        var headEnd: Int?
        while true {
          headEnd = Self.find(Self.terminator, in: buffer)
          if headEnd != nil { break }
          guard read(into: &buffer, chunk: &chunk) else { return }
        }
        guard let end = headEnd else { return }
        let head = String(decoding: buffer[..<end], as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        let contentLength =
          lines.lazy.compactMap { line -> Int? in
            guard line.hasPrefix("content-length:") else { return nil }
            return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
          }.first ?? 0
        let wantsContinue = lines.contains { $0.hasPrefix("expect:") && $0.contains("100-continue") }
        let total = end + Self.terminator.count + contentLength
        if wantsContinue, buffer.count < total, !write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) { return }
        while buffer.count < total {
          guard read(into: &buffer, chunk: &chunk) else { return }
        }
        let answer = lines.first?.contains("/chat/completions") == true ? answers.openAI : answers.gemini
        buffer.removeFirst(total)
        guard write(answer) else { return }
      }
    }

    private static let terminator: [UInt8] = Array("\r\n\r\n".utf8)

    private func read(into buffer: inout [UInt8], chunk: inout [UInt8]) -> Bool {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { return false }
      buffer.append(contentsOf: chunk[..<count])
      return true
    }

    private func write(_ bytes: [UInt8]) -> Bool {
      var sent = 0
      while sent < bytes.count {
        let count = bytes.withUnsafeBytes { raw -> Int in
          guard let base = raw.baseAddress else { return 0 }
          return Glibc.write(fd, base + sent, raw.count - sent)
        }
        guard count > 0 else { return false }
        sent += count
      }
      return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
      guard haystack.count >= needle.count else { return nil }
      for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
        if Array(haystack[index..<index + needle.count]) == needle { return index }
      }
      return nil
    }
  }
}

/// The fleet server as a child process of the benchmark.
///
/// Why `@unchecked Sendable`: the targets' CPU closures capture it, and the
/// benchmark asks for the CPU time between runs, from one task at a time;
/// nothing else touches its pipes after `init`.
final class FleetServerProcess: @unchecked Sendable {
  let port: Int
  let baseURL: URL
  private let process: Process
  private let stdin = Pipe()
  private let stdout = Pipe()

  init() throws {
    process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    if !CommandLine.arguments[0].contains("/") {
      process.executableURL = Bundle.main.executableURL
    }
    process.arguments = ["fleet-server"]
    process.standardOutput = stdout
    process.standardInput = stdin
    try process.run()
    let line = Self.readLine(stdout)
    guard let port = Int(line), let url = URL(string: "http://127.0.0.1:\(port)")
    else { throw BenchmarkError("the fleet server did not start") }
    self.port = port
    self.baseURL = url
  }

  /// The server's CPU time so far (user + system, all its threads), in ms.
  func cpuMilliseconds() -> Double {
    stdin.fileHandleForWriting.write(Data("\n".utf8))
    return Double(Self.readLine(stdout)) ?? .nan
  }

  /// The server's next line on `pipe`, without its newline ("" at its end).
  private static func readLine(_ pipe: Pipe) -> String {
    var line = Data()
    while true {
      let byte = pipe.fileHandleForReading.readData(ofLength: 1)
      if byte.isEmpty || byte == Data("\n".utf8) { break }
      line.append(byte)
    }
    return String(decoding: line, as: UTF8.self)
  }

  func stop() {
    try? stdin.fileHandleForWriting.close()
    process.waitUntilExit()
  }
}

/// CPU time (user + system) of this process, from `getrusage`.
enum ProcessCPU {
  /// This process's CPU time so far, in milliseconds.
  static var own: Double { milliseconds(RUSAGE_SELF) }

  /// The CPU time of this process's children that have been waited for.
  static var children: Double { milliseconds(RUSAGE_CHILDREN) }

  private static func milliseconds(_ who: __rusage_who) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who.rawValue), &usage)
    let ms = { (time: timeval) in Double(time.tv_sec) * 1000 + Double(time.tv_usec) / 1000 }
    return ms(usage.ru_utime) + ms(usage.ru_stime)
  }
}
