import Foundation
import Glibc
import HybridInferenceCore

/// One thread per client that waits, in `poll`, on every response the
/// client's requests await, and reads each as its bytes arrive
/// (`HTTP1Reading`).
///
/// Why one thread for all rather than the exchange's own: when a server
/// answers a batch at once (llama-server's slots finish together), 32
/// blocked threads meant 32 wake-ups on cores the server's compute keeps
/// busy, each behind the others, where curl's processes and this thread
/// need one each. A request on an idle connection, written from the
/// caller's thread, now needs no thread of its own at all. The thread is
/// started on the first registration and ends once nothing has been
/// registered for `linger`, so an idle client holds no thread and a client
/// released by its model is freed.
///
/// Why `poll` and not `epoll`: Swift's Glibc module carries `poll` and
/// `pipe`, while `epoll` would need a C module of its own in the remote
/// transport, a dependency DESIGN §10 does not give it. The descriptor list
/// is rebuilt before each wait (a few hundred at most: one per request in
/// flight), and a registration made during a wait wakes the thread once
/// through a pipe, however many arrive before it looks.
///
/// `@unchecked Sendable`: `state` is behind a `Locked`; the pipe's
/// descriptors are immutable after `init`, and a write to it is safe from
/// any thread. A reading is touched only by this thread once registered
/// (handed over under the lock).
final class HTTP1Poller: @unchecked Sendable {
  private struct State {
    var readings: [UInt64: HTTP1Reading] = [:]
    var nextID: UInt64 = 1
    var running = false
    /// Whether the thread is in (or about to enter) `poll` with a list
    /// built before the latest registration could be in it.
    var waiting = false
    /// Whether a byte is in the pipe the thread has not drained yet.
    var woken = false
  }

  /// The pipe that wakes the thread: read end, write end (-1 when the OS
  /// refused it: the thread then only wakes at deadlines and every
  /// registration is refused).
  private let wake: (read: Int32, write: Int32)
  private let stackBytes: @Sendable () -> Int
  private let linger: Duration
  private let state = Locked(State())

  /// - Parameters:
  ///   - stackBytes: The stack of the thread, read each time it starts.
  ///   - linger: How long the thread waits with nothing registered
  ///     before it ends.
  init(stackBytes: @escaping @Sendable () -> Int, linger: Duration) {
    self.stackBytes = stackBytes
    self.linger = linger
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends {
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      }
      wake = (ends[0], ends[1])
    } else {
      wake = (-1, -1)
    }
  }

  deinit {
    if wake.read >= 0 { _ = Glibc.close(wake.read) }
    if wake.write >= 0 { _ = Glibc.close(wake.write) }
  }

  /// Whether the thread runs (for tests).
  var isRunning: Bool { state.withLock { $0.running } }

  /// Waits for `reading`'s response on this poller's thread, started if
  /// need be. When the OS refused the wake pipe or refuses the thread, the
  /// reading (and any registered meanwhile) ends with `resourceUnavailable`.
  func register(_ reading: HTTP1Reading) {
    guard wake.write >= 0 else {
      reading.fail(URLError(.resourceUnavailable))
      reading.end()
      return
    }
    let (start, signal) = state.withLock { state -> (Bool, Bool) in
      state.readings[state.nextID] = reading
      state.nextID += 1
      let start = !state.running
      state.running = true
      let signal = state.waiting && !state.woken
      if signal { state.woken = true }
      return (start, signal)
    }
    if signal {
      var one: UInt8 = 1
      _ = Glibc.write(wake.write, &one, 1)
    }
    if start, !OSThread.start(stackSize: stackBytes(), name: "hi-http-poll", { self.run() }) {
      let stranded = state.withLock { state in
        state.running = false
        defer { state.readings = [:] }
        return state.readings.values
      }
      for reading in stranded {
        reading.fail(URLError(.resourceUnavailable))
        reading.end()
      }
    }
  }

  /// The thread's body: waits until a response has bytes or a deadline
  /// passes, reads or expires each, until idle for `linger`.
  private func run() {
    var descriptors: [pollfd] = []
    var ids: [UInt64] = []
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: HTTP1Client.readBufferBytes)
    defer { buffer.deallocate() }
    var idleSince: ContinuousClock.Instant?
    while true {
      let now = ContinuousClock.now
      descriptors.removeAll(keepingCapacity: true)
      ids.removeAll(keepingCapacity: true)
      descriptors.append(pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0))
      let wait = state.withLock { state -> Duration? in
        let wakesAt: ContinuousClock.Instant
        if state.readings.isEmpty {
          let since = idleSince ?? now
          idleSince = since
          guard now - since < linger else {
            state.running = false
            return nil
          }
          wakesAt = since + linger
        } else {
          idleSince = nil
          var earliest = ContinuousClock.Instant.now + .seconds(60)
          for (id, reading) in state.readings {
            ids.append(id)
            descriptors.append(pollfd(fd: reading.descriptor, events: Int16(POLLIN), revents: 0))
            earliest = min(earliest, reading.deadline)
          }
          wakesAt = earliest
        }
        state.waiting = true
        return max(.zero, wakesAt - now)
      }
      guard let wait else { return }
      let ready = poll(&descriptors, nfds_t(descriptors.count), Self.milliseconds(wait))
      state.withLock { state in
        state.waiting = false
        state.woken = false
      }
      if ready > 0 {
        if descriptors[0].revents != 0 { drainWake() }
        for index in ids.indices where descriptors[index + 1].revents != 0 {
          let id = ids[index]
          // Gone when it ended at its deadline after the list was built.
          guard let reading = state.withLock({ $0.readings[id] }), reading.read(into: buffer) else { continue }
          finish(id, reading)
        }
      }
      let checked = ContinuousClock.now
      let expired = state.withLock { state in state.readings.filter { $0.value.deadline <= checked } }
      for (id, reading) in expired {
        reading.fail(URLError(.timedOut))
        finish(id, reading)
      }
    }
  }

  private func drainWake() {
    var bytes = (UInt64(0), UInt64(0))
    while withUnsafeMutableBytes(of: &bytes, { Glibc.read(wake.read, $0.baseAddress, $0.count) }) > 0 {}
  }

  /// Forgets an ended reading, then ends it (which may hand its connection
  /// to another request, so never the other way round).
  private func finish(_ id: UInt64, _ reading: HTTP1Reading) {
    state.withLock { $0.readings[id] = nil }
    reading.end()
  }

  /// `wait` in whole milliseconds for `poll`, rounded up so a deadline is
  /// never read as not yet passed; at most a minute per wait.
  private static func milliseconds(_ wait: Duration) -> Int32 {
    let capped = min(wait, .seconds(60))
    return Int32((capped / .milliseconds(1)).rounded(.up))
  }
}
