import Foundation
import HybridInferenceCore

@testable import HybridInferenceRemote

#if canImport(Glibc)
  import Glibc
#endif

/// A loopback TCP server that answers each request with bytes a test
/// scripts, to drive the HTTP/1.1 client through what a Python server cannot
/// easily produce: exact framing, hostile bytes, closes at chosen points. It
/// counts connections and sees when the client hangs up.
///
/// `@unchecked Sendable`: the counters are behind `stats` (a `Locked`); the
/// listening descriptor is written once in `init` and closed in `stop`.
final class ScriptedHTTPServer: @unchecked Sendable {
  /// What the server does with one request.
  enum Reply: Sendable {
    /// Writes the bytes; closes the connection after them when `close`.
    case send(String, close: Bool = false)
    /// Writes each part in turn, 100 ms apart (so that the client reads
    /// them apart), then closes the connection.
    case sendParts([String])
    /// Writes the bytes, then waits up to 10 s for the client to hang up.
    case sendAndHold(String)
    /// Closes the connection without answering.
    case close
    /// Writes the head, then `unit` over and over as fast as the client
    /// takes it, up to `bytes` or until the client hangs up
    /// (`Stats.floodedBytes`). With `reset`, the flood also ends when the
    /// client has taken nothing for 300 ms, and the connection is then reset
    /// (RST, not FIN; `Stats.resets`) rather than closed.
    case flood(head: String, bytes: Int, unit: String = "x", reset: Bool = false)
  }

  struct Stats {
    var connections = 0
    var open = 0
    var mostOpen = 0
    var requests: [String] = []
    /// Connections on which the server saw the client hang up while it held them.
    var hangUpsSeen = 0
    /// Connections a worker gave up on after `idleHold` without a request
    /// (only with `workers`).
    var idleDrops = 0
    /// Bytes `flood` replies got into the socket after their heads.
    var floodedBytes = 0
    /// Connections `flood` replies reset.
    var resets = 0
  }

  let port: Int
  let stats = Locked(Stats())
  private let listener: Int32
  /// `(connection index, request index on it, request head) -> reply`.
  private let script: @Sendable (Int, Int, String) -> Reply
  /// With `workers`: accepted connections waiting for a worker.
  private let queue = Locked<[(Int32, Int)]>([])
  private let queued = DispatchSemaphore(value: 0)
  private let idleHold: Duration?

  /// - Parameters:
  ///   - workers: Serve connections with this many threads, each keeping a
  ///     connection until the client closes it or sends nothing for
  ///     `idleHold`, as cpp-httplib's pool (llama-server's) does; nil: a
  ///     thread per connection.
  init(
    ipv6: Bool = false, workers: Int? = nil, idleHold: Duration = .seconds(3),
    script: @escaping @Sendable (Int, Int, String) -> Reply
  ) throws {
    self.script = script
    self.idleHold = workers == nil ? nil : idleHold
    let family = ipv6 ? AF_INET6 : AF_INET
    let listener = socket(family, Int32(SOCK_STREAM.rawValue), 0)
    var yes: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var bound: Int32
    if ipv6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_addr = in6addr_loopback
      bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    } else {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    guard bound == 0, listen(listener, 64) == 0 else { throw URLError(.cannotConnectToHost) }
    var storage = sockaddr_in6()
    var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
    }
    self.listener = listener
    port = Int(UInt16(bigEndian: storage.sin6_port))
    // A port an earlier test saw refused or timing out may come back as this
    // server's: it listens now, so whatever the process remembered about it
    // (the shared reachability memory, keyed by origin) is stale.
    for host in ipv6 ? ["[::1]", "localhost"] : ["127.0.0.1", "localhost"] {
      if let url = try? url(host: host), let origin = Origin(url) { ReachabilityMemory.shared.recordReachable(origin) }
    }
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
    for _ in 0..<(workers ?? 0) {
      Thread { [self] in
        while true {
          queued.wait()
          guard let (connection, number) = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
          serve(connection, number)
        }
      }.start()
    }
  }

  func url(_ path: String = "/", host: String = "127.0.0.1") throws -> URL {
    guard let url = URL(string: "http://\(host):\(port)\(path)") else { throw URLError(.badURL) }
    return url
  }

  func stop() {
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }

  private func acceptLoop() {
    var index = 0
    while true {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { return }
      let number = index
      index += 1
      stats.withLock {
        $0.connections += 1
        $0.open += 1
        $0.mostOpen = max($0.mostOpen, $0.open)
      }
      if idleHold != nil {
        queue.withLock { $0.append((connection, number)) }
        queued.signal()
      } else {
        Thread { [self] in serve(connection, number) }.start()
      }
    }
  }

  private func serve(_ connection: Int32, _ number: Int) {
    defer {
      close(connection)
      stats.withLock { $0.open -= 1 }
    }
    var pending: [UInt8] = []
    var requestIndex = 0
    if let idleHold {
      var timeout = timeval(tv_sec: Int(idleHold.components.seconds), tv_usec: 0)
      setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
    while true {
      guard let head = readRequest(connection, &pending) else {
        if idleHold != nil, errno == EAGAIN || errno == EWOULDBLOCK { stats.withLock { $0.idleDrops += 1 } }
        return
      }
      stats.withLock { $0.requests.append(head) }
      switch script(number, requestIndex, head) {
      case .send(let text, let closeAfter):
        writeAll(connection, Array(text.utf8))
        if closeAfter { return }
      case .sendAndHold(let text):
        writeAll(connection, Array(text.utf8))
        var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        var byte: UInt8 = 0
        if poll(&poller, 1, 10_000) == 1, recv(connection, &byte, 1, 0) <= 0 {
          stats.withLock { $0.hangUpsSeen += 1 }
        }
        return
      case .sendParts(let parts):
        for (index, part) in parts.enumerated() {
          if index > 0 { Thread.sleep(forTimeInterval: 0.1) }
          writeAll(connection, Array(part.utf8))
        }
        return
      case .close:
        return
      case .flood(let head, let bytes, let unit, let reset):
        writeAll(connection, Array(head.utf8))
        if reset {
          var stall = timeval(tv_sec: 0, tv_usec: 300_000)
          setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &stall, socklen_t(MemoryLayout<timeval>.size))
        }
        flood(connection, bytes, unit: Array(unit.utf8))
        if reset {
          var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
          setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
          stats.withLock { $0.resets += 1 }
        }
        return
      }
      requestIndex += 1
    }
  }

  /// One request's head (its body, by Content-Length, is read and dropped).
  private func readRequest(_ connection: Int32, _ pending: inout [UInt8]) -> String? {
    let end = Array("\r\n\r\n".utf8)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      if let range = pending.firstRange(of: end) {
        let head = String(decoding: pending[..<range.lowerBound], as: UTF8.self)
        var rest = Array(pending[range.upperBound...])
        let length =
          head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
          .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while rest.count < length {
          let count = recv(connection, &buffer, buffer.count, 0)
          guard count > 0 else { return nil }
          rest += buffer[..<count]
        }
        pending = Array(rest[length...])
        return head
      }
      let count = recv(connection, &buffer, buffer.count, 0)
      guard count > 0 else { return nil }
      pending += buffer[..<count]
    }
  }

  private func flood(_ connection: Int32, _ bytes: Int, unit: [UInt8]) {
    let chunk = Array([[UInt8]](repeating: unit, count: max(1, (64 << 10) / max(1, unit.count))).joined())
    var sent = 0
    while sent < bytes {
      let written = chunk.withUnsafeBytes {
        send(connection, $0.baseAddress, min($0.count, bytes - sent), Int32(MSG_NOSIGNAL))
      }
      guard written > 0 else { return }
      sent += written
      stats.withLock { $0.floodedBytes += written }
    }
  }

  private func writeAll(_ connection: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard written > 0 else { return }
      offset += written
    }
  }
}
