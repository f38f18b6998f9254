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
/// A response whose consumer is `HTTP1Client.readAheadBytes` behind is left
/// out of the list (`HTTP1Reading.isBehind`), its deadline still kept, until
/// its consumer or a cancellation calls `wake()`: what a fast server sends
/// then waits in the socket, not in the stream's buffer.
///
/// `@unchecked Sendable`: `state`, the pipe's descriptors included, is
/// behind a `Locked`; the pipe is written under it. A reading is touched
/// only by this thread once registered (handed over under the lock), or,
/// when the OS refuses the thread, by the registering thread after taking
/// every reading out of the table: no poller thread exists then.
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
    /// The pipe that wakes the thread (read end, write end): made by the
    /// first registration, and tried again by the next when the OS
    /// refused it; kept until `deinit`.
    var wake: (read: Int32, write: Int32)?
  }

  private let stackBytes: @Sendable () -> Int
  private let linger: Duration
  private let makePipe: @Sendable () -> (read: Int32, write: Int32)?
  private let state = Locked(State())

  /// - Parameters:
  ///   - stackBytes: The stack of the thread, read each time it starts.
  ///   - linger: How long the thread waits with nothing registered
  ///     before it ends.
  ///   - makePipe: Makes the wake pipe (`systemPipe`; tests refuse it).
  init(
    stackBytes: @escaping @Sendable () -> Int, linger: Duration,
    makePipe: @escaping @Sendable () -> (read: Int32, write: Int32)? = systemPipe
  ) {
    self.stackBytes = stackBytes
    self.linger = linger
    self.makePipe = makePipe
  }

  deinit {
    if let wake = state.withLock({ $0.wake }) {
      _ = Glibc.close(wake.read)
      _ = Glibc.close(wake.write)
    }
  }

  /// A non-blocking, close-on-exec pipe; nil when the OS refuses one.
  @Sendable static func systemPipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return nil }
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    return (ends[0], ends[1])
  }

  /// Whether the thread runs (for tests).
  var isRunning: Bool { state.withLock { $0.running } }

  /// Waits for `reading`'s response on this poller's thread, started if
  /// need be. When the OS refuses the wake pipe, the reading ends with
  /// `resourceUnavailable`; when it refuses the thread, so does every
  /// reading registered meanwhile.
  func register(_ reading: HTTP1Reading) {
    let (wake, start) = state.withLock { state -> ((read: Int32, write: Int32)?, Bool) in
      if state.wake == nil { state.wake = makePipe() }
      guard let wake = state.wake else { return (nil, false) }
      state.readings[state.nextID] = reading
      state.nextID += 1
      let start = !state.running
      state.running = true
      Self.nudge(&state)
      return (wake, start)
    }
    guard let wake else {
      reading.fail(URLError(.resourceUnavailable))
      reading.end()
      return
    }
    if start, !OSThread.start(stackSize: stackBytes(), name: "hi-http-poll", { self.run(waking: wake.read) }) {
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

  /// Makes the thread look at its table again: a reading it stopped
  /// reading (`HTTP1Reading.isBehind`) may be read now.
  func wake() {
    state.withLock { Self.nudge(&$0) }
  }

  /// Wakes a thread in (or about to enter) `poll` with a list made before
  /// now: one byte into the non-blocking pipe, under the lock, which the
  /// thread drains before it waits again; nothing when one is there already.
  private static func nudge(_ state: inout State) {
    guard state.waiting, !state.woken, let wake = state.wake else { return }
    state.woken = true
    var one: UInt8 = 1
    _ = Glibc.write(wake.write, &one, 1)
  }

  /// The thread's body (`wakeRead`: the pipe's read end): waits until a
  /// response has bytes or a deadline passes, reads or expires each, until
  /// idle for `linger`.
  private func run(waking wakeRead: Int32) {
    var descriptors: [pollfd] = []
    var ids: [UInt64] = []
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: HTTP1Client.readBufferBytes)
    defer { buffer.deallocate() }
    var idleSince: ContinuousClock.Instant?
    // The earliest deadline in the list: no reading can have expired
    // before it, so the table is not scanned on every wake.
    var firstDeadline: ContinuousClock.Instant?
    while true {
      let now = ContinuousClock.now
      descriptors.removeAll(keepingCapacity: true)
      ids.removeAll(keepingCapacity: true)
      descriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
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
          var earliest = now + .seconds(60)
          for (id, reading) in state.readings {
            earliest = min(earliest, reading.deadline)
            // Its consumer is behind: not read until `wake()` (its deadline still holds).
            if reading.isBehind { continue }
            ids.append(id)
            descriptors.append(pollfd(fd: reading.descriptor, events: Int16(POLLIN), revents: 0))
          }
          wakesAt = earliest
          firstDeadline = earliest
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
        if descriptors[0].revents != 0 { Self.drain(wakeRead) }
        for index in ids.indices where descriptors[index + 1].revents != 0 {
          let id = ids[index]
          guard let reading = state.withLock({ $0.readings[id] }), reading.read(into: buffer) else { continue }
          finish(id, reading)
        }
      } else if ready < 0, errno != EINTR {
        // The kernel short of memory: wait a little rather than spin;
        // deadlines still end what it keeps from being read.
        usleep(10_000)
      }
      let checked = ContinuousClock.now
      // A reading registered during the wait is checked on the next turn,
      // whose wait is then zero if its deadline has passed.
      guard let first = firstDeadline, first <= checked else { continue }
      firstDeadline = nil
      let expired = state.withLock { state in state.readings.filter { $0.value.deadline <= checked } }
      for (id, reading) in expired {
        reading.fail(URLError(.timedOut))
        finish(id, reading)
      }
    }
  }

  private static func drain(_ descriptor: Int32) {
    var bytes = (UInt64(0), UInt64(0))
    while withUnsafeMutableBytes(of: &bytes, { Glibc.read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
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
