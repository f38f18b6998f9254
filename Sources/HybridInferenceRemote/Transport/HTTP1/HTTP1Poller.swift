import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One thread per client that waits, in `epoll_wait`, on every response
/// the client's requests await, and reads each as its bytes arrive
/// (`HTTP1Reading`).
///
/// Why one thread for all rather than the exchange's own: when a server
/// answers a batch at once (llama-server's slots finish together), 32
/// blocked threads mean 32 wake-ups on cores the server's compute keeps
/// busy, each behind the others, where curl's processes and this thread
/// need one each. A request on an idle connection, written from the
/// caller's thread, needs no thread of its own at all. The thread is
/// started on the first registration and ends once nothing has been
/// registered for `linger`, so an idle client holds no thread and a client
/// released by its model is freed.
///
/// A registration adds the response's socket to the epoll set from the
/// registering thread (`EventPoll` says why epoll), so the waiting thread is
/// not woken for it; only one whose deadline comes before the end of the
/// current wait wakes it, through a pipe that is in the set too.
///
/// A response whose consumer is `HTTP1Client.readAheadBytes` behind is
/// parked when its socket next has bytes: taken out of the set, its
/// deadline still kept, until its consumer or a cancellation calls
/// `wake()`: what a fast server sends then waits in the socket, not in the
/// stream's buffer.
///
/// `@unchecked Sendable`: `state`, the pipe and the epoll set included, is
/// behind a `Locked`; the pipe is written and the set changed under it. A
/// reading is touched only by this thread once registered (handed over
/// under the lock), or, when the OS refuses the thread, by the registering
/// thread after taking every reading out of the table: no poller thread
/// exists then.
final class HTTP1Poller: @unchecked Sendable {
  private struct State {
    var readings: [UInt64: HTTP1Reading] = [:]
    /// Readings whose consumer was behind: out of the set until `wake()`.
    var parked: Set<UInt64> = []
    /// The next reading's id (0 is the pipe's).
    var nextID: UInt64 = 1
    var running = false
    /// When the thread's wait ends, while it is in (or about to enter)
    /// `epoll_wait`; nil otherwise.
    var waitingUntil: ContinuousClock.Instant?
    /// Whether a byte is in the pipe the thread has not drained yet.
    var woken = false
    /// The pipe that wakes the thread (read end, write end) and the set it
    /// waits on: made by the first registration, and tried again by the
    /// next when the OS refused either; kept until `deinit`.
    var wake: (read: Int32, write: Int32)?
    var events: EventPoll?
  }

  private let stackBytes: @Sendable () -> Int
  private let linger: Duration
  private let makePipe: @Sendable () -> (read: Int32, write: Int32)?
  private let onNudge: @Sendable () -> Void
  private let state = Locked(State())

  /// - Parameters:
  ///   - stackBytes: The stack of the thread, read each time it starts.
  ///   - linger: How long the thread waits with nothing registered
  ///     before it ends.
  ///   - makePipe: Makes the wake pipe (`systemPipe`; tests refuse it).
  ///   - onNudge: Called each time a registration wakes the waiting thread
  ///     through the pipe, under the poller's lock (it must not call the
  ///     poller); nothing by default, tests count the wakes.
  init(
    stackBytes: @escaping @Sendable () -> Int, linger: Duration,
    makePipe: @escaping @Sendable () -> (read: Int32, write: Int32)? = systemPipe,
    onNudge: @escaping @Sendable () -> Void = {}
  ) {
    self.stackBytes = stackBytes
    self.linger = linger
    self.makePipe = makePipe
    self.onNudge = onNudge
  }

  deinit {
    if let wake = state.withLock({ $0.wake }) {
      _ = close(wake.read)
      _ = close(wake.write)
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
  /// Whether the thread is in (or about to enter) `epoll_wait` (for tests).
  var isWaiting: Bool { state.withLock { $0.waitingUntil != nil } }

  /// Waits for `reading`'s response on this poller's thread, started if
  /// need be. When the OS refuses the wake pipe or the epoll set (or room
  /// in it), the reading ends with `resourceUnavailable`; when it refuses
  /// the thread, so does every reading registered meanwhile.
  func register(_ reading: HTTP1Reading) {
    let outcome = state.withLock { state -> (start: Bool, events: EventPoll, wake: Int32)? in
      guard let (events, wake) = Self.prepare(&state, makePipe: makePipe) else { return nil }
      let id = state.nextID
      // In the table before the set: the thread looks it up (under this
      // lock) as soon as its socket is ready.
      guard events.add(reading.descriptor, id: id) else { return nil }
      state.nextID += 1
      state.readings[id] = reading
      let start = !state.running
      state.running = true
      if let until = state.waitingUntil, reading.deadline < until, Self.nudge(&state) { onNudge() }
      return (start, events, wake)
    }
    guard let outcome else {
      reading.fail(URLError(.resourceUnavailable))
      reading.end()
      return
    }
    let (events, wake) = (outcome.events, outcome.wake)
    if outcome.start,
      !OSThread.start(stackSize: stackBytes(), name: "hi-http-poll", { self.run(events, waking: wake) })
    {
      let stranded = state.withLock { state in
        state.running = false
        defer { (state.readings, state.parked) = ([:], []) }
        return state.readings.values
      }
      for reading in stranded {
        events.remove(reading.descriptor)
        reading.fail(URLError(.resourceUnavailable))
        reading.end()
      }
    }
  }

  /// The set and the pipe's read end (in the set as id 0), made if need
  /// be; nil when the OS refuses either.
  private static func prepare(
    _ state: inout State, makePipe: () -> (read: Int32, write: Int32)?
  ) -> (EventPoll, Int32)? {
    if state.wake == nil { state.wake = makePipe() }
    guard let wake = state.wake else { return nil }
    if state.events == nil, let events = EventPoll(), events.add(wake.read, id: 0) { state.events = events }
    guard let events = state.events else { return nil }
    return (events, wake.read)
  }

  /// Puts every parked reading back in the set: its consumer caught up
  /// (or cancelled). One still behind is parked again when its socket has
  /// bytes; one the kernel refuses room stays parked until the next call
  /// or its deadline.
  func wake() {
    state.withLock { state in
      guard let events = state.events, !state.parked.isEmpty else { return }
      state.parked = state.parked.filter { id in
        guard let reading = state.readings[id] else { return false }
        return !events.add(reading.descriptor, id: id)
      }
    }
  }

  /// Wakes a thread in (or about to enter) `epoll_wait`: one byte into the
  /// non-blocking pipe, under the lock, which the thread drains before it
  /// waits again; nothing when one is there already. Whether it wrote one.
  private static func nudge(_ state: inout State) -> Bool {
    guard state.waitingUntil != nil, !state.woken, let wake = state.wake else { return false }
    state.woken = true
    var one: UInt8 = 1
    _ = write(wake.write, &one, 1)
    return true
  }

  /// The thread's body (`wakeRead`: the pipe's read end): waits until a
  /// response has bytes or a deadline passes, reads or expires each, until
  /// idle for `linger`.
  private func run(_ events: EventPoll, waking wakeRead: Int32) {
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: HTTP1Client.readBufferBytes)
    defer { buffer.deallocate() }
    var ids: [UInt64] = []
    var idleSince: ContinuousClock.Instant?
    // The earliest deadline in the table: no reading can have expired
    // before it, so the table is not scanned for expiry on every wake.
    var firstDeadline: ContinuousClock.Instant?
    while true {
      let now = ContinuousClock.now
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
          wakesAt = state.readings.values.lazy.map(\.deadline).min() ?? now
          firstDeadline = wakesAt
        }
        state.waitingUntil = wakesAt
        return max(.zero, wakesAt - now)
      }
      guard let wait else { return }
      let waited = events.wait(milliseconds: Self.milliseconds(wait), ids: &ids)
      state.withLock { state in
        state.waitingUntil = nil
        state.woken = false
      }
      for id in ids {
        if id == 0 {
          Self.drain(wakeRead)
          continue
        }
        guard let reading = state.withLock({ $0.readings[id] }) else { continue }
        if reading.isBehind {
          park(id, reading, events)
        } else if reading.read(into: buffer) {
          finish(id, reading, events)
        }
      }
      // The kernel short of memory: wait a little rather than spin;
      // deadlines still end what it keeps from being read.
      if !waited { usleep(10_000) }
      let checked = ContinuousClock.now
      // A reading registered during the wait is checked on the next turn,
      // whose wait is then zero if its deadline has passed.
      guard let first = firstDeadline, first <= checked else { continue }
      firstDeadline = nil
      let expired = state.withLock { state in state.readings.filter { $0.value.deadline <= checked } }
      for (id, reading) in expired {
        reading.fail(URLError(.timedOut))
        finish(id, reading, events)
      }
    }
  }

  /// Takes a reading whose consumer is behind out of the set, until `wake()`.
  /// Checked again under the lock: a consumer that caught up since calls
  /// `wake()` after it, so one still behind here is woken by that call,
  /// and one no longer behind stays in the set and is read on the next turn.
  private func park(_ id: UInt64, _ reading: HTTP1Reading, _ events: EventPoll) {
    state.withLock { state in
      guard reading.isBehind else { return }
      events.remove(reading.descriptor)
      state.parked.insert(id)
    }
  }

  private static func drain(_ descriptor: Int32) {
    var bytes = (UInt64(0), UInt64(0))
    while withUnsafeMutableBytes(of: &bytes, { read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
  }

  /// Forgets an ended reading and takes its socket out of the set, then
  /// ends it (which may hand its connection to another request, so never
  /// the other way round).
  private func finish(_ id: UInt64, _ reading: HTTP1Reading, _ events: EventPoll) {
    let parked = state.withLock { state in
      state.readings[id] = nil
      return state.parked.remove(id) != nil
    }
    if !parked { events.remove(reading.descriptor) }
    reading.end()
  }

  /// `wait` in whole milliseconds for `poll`, rounded up so a deadline is
  /// never read as not yet passed; at most a minute per wait.
  private static func milliseconds(_ wait: Duration) -> Int32 {
    let capped = min(wait, .seconds(60))
    return Int32((capped / .milliseconds(1)).rounded(.up))
  }
}
