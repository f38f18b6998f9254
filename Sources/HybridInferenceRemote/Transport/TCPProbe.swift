import Dispatch
import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
  private let streamType = Int32(SOCK_STREAM.rawValue)
  private let connectSocket = Glibc.connect
#elseif canImport(Musl)
  import Musl
  private let streamType = SOCK_STREAM
  private let connectSocket = Musl.connect
#elseif canImport(Darwin)
  import Darwin
  private let streamType = SOCK_STREAM
  private let connectSocket = Darwin.connect
#endif

/// The cheapest question a server can answer: does a TCP connection to its
/// host and port open? `ReachabilityMemory` asks it to learn when a server
/// it remembers as offline is back, without sending a request (no key, no
/// prompt, no quota).
enum TCPProbe {
  /// Whether a connection to `origin` opens within `timeout` (DNS included).
  /// Runs on a Dispatch worker: name resolution and `poll` block, which a
  /// Swift concurrency thread must not do.
  static func canConnect(to origin: Origin, timeout: Duration) async -> Bool {
    await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      DispatchQueue.global(qos: .utility).async {
        continuation.resume(returning: connect(host: origin.host, port: origin.port, timeout: timeout))
      }
    }
  }

  /// Tries each address of `host` in turn with a non-blocking connect.
  private static func connect(host: String, port: Int, timeout: Duration) -> Bool {
    let deadline = ContinuousClock.now.advanced(byWait: timeout)
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = streamType
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else { return false }
    defer { freeaddrinfo(list) }
    var cursor: UnsafeMutablePointer<addrinfo>? = list
    while let info = cursor {
      cursor = info.pointee.ai_next
      if connect(info.pointee, deadline: deadline) { return true }
      if ContinuousClock.now >= deadline { return false }
    }
    return false
  }

  private static func connect(_ info: addrinfo, deadline: ContinuousClock.Instant) -> Bool {
    let descriptor = socket(info.ai_family, info.ai_socktype, info.ai_protocol)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    guard fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0 else { return false }
    if connectSocket(descriptor, info.ai_addr, info.ai_addrlen) == 0 { return true }
    guard errno == EINPROGRESS else { return false }
    let remaining = max(0, (deadline - ContinuousClock.now) / .milliseconds(1))
    var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
    guard poll(&poller, 1, Int32(min(remaining, Double(Int32.max)))) == 1 else { return false }
    var failure: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { return false }
    return failure == 0
  }
}
