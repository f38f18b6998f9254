import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
  private let streamType = Int32(SOCK_STREAM.rawValue)
  private let systemConnect = Glibc.connect
  private let systemShutdown = Glibc.shutdown
  private let shutdownBoth = Int32(SHUT_RDWR)
  private let noSignal = Int32(MSG_NOSIGNAL)
#elseif canImport(Musl)
  import Musl
  private let streamType = SOCK_STREAM
  private let systemConnect = Musl.connect
  private let systemShutdown = Musl.shutdown
  private let shutdownBoth = SHUT_RDWR
  private let noSignal = MSG_NOSIGNAL
#elseif canImport(Darwin)
  import Darwin
  private let streamType = SOCK_STREAM
  private let systemConnect = Darwin.connect
  private let systemShutdown = Darwin.shutdown
  private let shutdownBoth = SHUT_RDWR
  private let noSignal: Int32 = 0
#endif

/// One TCP connection (non-blocking), connected and written with `poll`
/// bounding every wait by a deadline; its responses are read by the
/// client's poller (`HTTP1Reading`).
///
/// `@unchecked Sendable`: the descriptor is only read, written and closed by
/// the thread that holds the connection (the pool hands it to one exchange
/// at a time; an exchange hands it on from the caller's thread to its own
/// by starting that thread, and to the poller's under the poller's lock);
/// the one call another thread makes is `shutdown`, which the kernel allows
/// concurrently and which only makes the holder's `poll` or the poller's
/// wait return at once. The descriptor is closed only by the holder,
/// after the canceller can no longer reach it (see `HTTP1Exchange`), so a
/// `shutdown` never lands on a reused descriptor number.
final class HTTP1Socket: @unchecked Sendable {
  let descriptor: Int32
  /// When the connection went idle in the pool, and how long it may stay so:
  /// written by the holder before it hands the socket back and by the pool
  /// under its lock, so never by two threads at once.
  var idleSince: ContinuousClock.Instant?
  var idleTimeout: Duration = HTTP1Client.defaultIdleTimeout

  private init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  /// The longest single `poll`: waits are cut into slices this long so that
  /// a cancellation flag is seen even when no byte and no shutdown comes.
  static let pollSlice: Duration = .milliseconds(250)

  /// Connects to `host:port`, trying each address `getaddrinfo` gives in
  /// turn (IPv6 and IPv4) until `deadline`; TCP_NODELAY set.
  ///
  /// - Parameter register: Called with each socket before its connect
  ///   starts, so that a cancellation can shut it down.
  /// - Throws: `URLError` `.cannotFindHost` (name resolution),
  ///   `.cannotConnectToHost` (refused or unreachable), `.timedOut`,
  ///   `.cancelled`.
  static func connect(
    host: String, port: Int, deadline: ContinuousClock.Instant, isCancelled: () -> Bool,
    register: (HTTP1Socket?) -> Void
  ) throws(URLError) -> HTTP1Socket {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = streamType
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else { throw URLError(.cannotFindHost) }
    defer { freeaddrinfo(list) }
    var failure = URLError(.cannotConnectToHost)
    var cursor: UnsafeMutablePointer<addrinfo>? = list
    while let info = cursor {
      cursor = info.pointee.ai_next
      let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
      guard descriptor >= 0 else { continue }
      let candidate = HTTP1Socket(descriptor: descriptor)
      register(candidate)
      do throws(URLError) {
        try candidate.connect(info.pointee, deadline: deadline, isCancelled: isCancelled)
        return candidate
      } catch {
        register(nil)
        candidate.close()
        if error.code == .timedOut || error.code == .cancelled { throw error }
        failure = error
      }
    }
    throw failure
  }

  private func connect(
    _ info: addrinfo, deadline: ContinuousClock.Instant, isCancelled: () -> Bool
  ) throws(URLError) {
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    guard fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0 else {
      throw URLError(.cannotConnectToHost)
    }
    var yes: Int32 = 1
    _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    #if canImport(Darwin)
      _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
    #endif
    if systemConnect(descriptor, info.ai_addr, info.ai_addrlen) == 0 { return }
    guard errno == EINPROGRESS else { throw URLError(.cannotConnectToHost) }
    try wait(for: Int16(POLLOUT), until: deadline, isCancelled: isCancelled)
    var failure: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0, failure == 0 else {
      throw isCancelled() ? URLError(.cancelled) : URLError(.cannotConnectToHost)
    }
  }

  /// Waits until the socket is ready for `events`; throws `.timedOut` at
  /// the deadline and `.cancelled` once `isCancelled` says so. An error or
  /// hang-up condition counts as ready: the next call reports it.
  func wait(for events: Int16, until deadline: ContinuousClock.Instant, isCancelled: () -> Bool) throws(URLError) {
    while true {
      if isCancelled() { throw URLError(.cancelled) }
      let now = ContinuousClock.now
      guard now < deadline else { throw URLError(.timedOut) }
      let slice = min(deadline - now, Self.pollSlice)
      let milliseconds = Int32(max(1, (slice / .milliseconds(1)).rounded(.up)))
      var poller = pollfd(fd: descriptor, events: events, revents: 0)
      let ready = poll(&poller, 1, milliseconds)
      if ready > 0 { return }
      if ready < 0, errno != EINTR { throw URLError(.networkConnectionLost) }
    }
  }

  /// Writes what the socket takes of `bytes` from `offset` without waiting
  /// for room, moving `offset` past what went out; false when the peer is
  /// gone (`offset` then still says how much went out before).
  func writeAvailable(_ bytes: [UInt8], from offset: inout Int) -> Bool {
    while offset < bytes.count {
      let start = offset
      let written = bytes.withUnsafeBytes { buffer in
        send(descriptor, buffer.baseAddress.map { $0 + start }, buffer.count - start, noSignal)
      }
      if written > 0 {
        offset += written
      } else if written < 0, errno == EINTR {
        continue
      } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
        return true
      } else {
        return false
      }
    }
    return true
  }

  /// Writes all of `bytes` from `offset`, waiting for room as needed; on
  /// return or throw, `offset` says how much went out.
  /// - Throws: `URLError(.networkConnectionLost)` when the peer is gone,
  ///   `.timedOut`, `.cancelled`.
  func write(
    _ bytes: [UInt8], from offset: inout Int, until deadline: ContinuousClock.Instant, isCancelled: () -> Bool
  ) throws(URLError) {
    while true {
      guard writeAvailable(bytes, from: &offset) else {
        throw isCancelled() ? URLError(.cancelled) : URLError(.networkConnectionLost)
      }
      if offset >= bytes.count { return }
      try wait(for: Int16(POLLOUT), until: deadline, isCancelled: isCancelled)
    }
  }

  /// Whether an idle connection can still carry a request: nothing is
  /// readable on it (a readable idle socket is a close, a reset, or bytes
  /// the server should not have sent).
  var isUsableWhenIdle: Bool {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) == 0
  }

  /// Makes a blocked `poll`/`recv` on this socket return at once, and the
  /// peer see the connection end; safe from any thread while the holder
  /// has not closed the socket.
  func shutdown() {
    _ = systemShutdown(descriptor, shutdownBoth)
  }

  /// Closes the descriptor; only the holder calls it, once.
  func close() {
    #if canImport(Glibc)
      _ = Glibc.close(descriptor)
    #elseif canImport(Musl)
      _ = Musl.close(descriptor)
    #elseif canImport(Darwin)
      _ = Darwin.close(descriptor)
    #endif
  }
}
