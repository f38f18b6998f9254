import Dispatch
import Foundation
import HybridInferenceCore

/// The connections of one origin: at most `limit` open (idle, in use or
/// being opened), idle ones reused most recently used first, requests past
/// the limit served first come, first served.
///
/// `@unchecked Sendable`: every field is read and written under `lock`;
/// exchange threads, callers' threads (an idle connection taken), the
/// poller's thread (a connection given back) and the idle timer call in. A
/// request past the limit blocks its exchange thread on its own semaphore
/// until a connection is handed to it, its deadline passes or it is
/// cancelled: one semaphore per waiter, so a release wakes the one it
/// serves, not all of them.
final class HTTP1ConnectionPool: @unchecked Sendable {
  /// What `acquire` hands out: a slot counted against the limit, with an
  /// idle connection in it or none (the caller opens one).
  struct Lease {
    var socket: HTTP1Socket?
  }

  private final class Waiter {
    var lease: Lease?
    let wakeUp = DispatchSemaphore(value: 0)
  }

  private let limit: Int
  private let lock = NSLock()
  /// Idle connections, the most recently used last.
  private var idle: [HTTP1Socket] = []
  /// Connections counted against the limit: idle, in use, being opened.
  private var open = 0
  private var waiters: [Waiter] = []
  /// Requests sent on a connection of their own opening that have not had
  /// a byte of answer yet (see `release`).
  private var awaitingFirstAnswer = 0
  private var closed = false
  /// Whether a sweep of idle connections is scheduled.
  private var sweepScheduled = false
  /// Whether `closeIdleWhileOthersWait` is scheduled.
  private var graceCheckScheduled = false

  init(limit: Int) {
    self.limit = limit
  }

  /// A slot for one request: an idle connection when there is a usable one,
  /// else permission to open one; waits (FIFO) while `limit` are open.
  /// - Throws: `URLError(.timedOut)` at `deadline`, `.cancelled` once
  ///   `isCancelled` says so.
  func acquire(until deadline: ContinuousClock.Instant, isCancelled: () -> Bool) throws(URLError) -> Lease {
    lock.lock()
    if waiters.isEmpty, let lease = takeLocked() {
      lock.unlock()
      return lease
    }
    let waiter = Waiter()
    waiters.append(waiter)
    lock.unlock()
    while true {
      // Cut into slices: a cancellation sets a flag, it does not signal.
      let slice = min(max(deadline - ContinuousClock.now, .zero), .milliseconds(250))
      _ = waiter.wakeUp.wait(timeout: .now() + .milliseconds(Int(slice / .milliseconds(1)) + 1))
      lock.lock()
      if let lease = waiter.lease {
        lock.unlock()
        // The lease is this waiter's alone now (`handOverLocked` took it
        // out of line), so its poll, and maybe close, need not hold the
        // lock every other request waits on.
        return Self.stillUsable(lease)
      }
      // A slot freed by a sweep or a close goes to the first in line.
      if waiters.first === waiter, let lease = takeLocked() {
        waiters.removeFirst()
        lock.unlock()
        return lease
      }
      if isCancelled() || ContinuousClock.now >= deadline {
        waiters.removeAll { $0 === waiter }
        lock.unlock()
        throw URLError(isCancelled() ? .cancelled : .timedOut)
      }
      lock.unlock()
    }
  }

  /// `lease` as handed over by `release`, or the slot alone (its
  /// connection closed) when the server has closed that connection since:
  /// a request is written only on a connection not seen closed, as
  /// `takeLocked` checks the idle ones (`HTTP1Exchange.mayResend` says why).
  private static func stillUsable(_ lease: Lease) -> Lease {
    guard let socket = lease.socket, !socket.isUsableWhenIdle else { return lease }
    socket.close()
    return Lease(socket: nil)
  }

  /// An idle connection now, or nil (none idle, or requests already wait
  /// for one, who come first): never a new slot, never a wait.
  func takeIdle() -> HTTP1Socket? {
    lock.lock()
    defer { lock.unlock() }
    guard waiters.isEmpty, !idle.isEmpty else { return nil }
    guard let lease = takeLocked() else { return nil }
    guard let socket = lease.socket else {
      // Every idle one was stale; the slot takeLocked counted goes back.
      open -= 1
      return nil
    }
    return socket
  }

  /// Gives `lease` to the first waiter and wakes it; under `lock`.
  private func handOverLocked(_ lease: Lease) {
    let waiter = waiters.removeFirst()
    waiter.lease = lease
    waiter.wakeUp.signal()
  }

  /// A request went out on a connection it opened, and no byte of answer
  /// has come back yet; `answerBegan()` ends it, once.
  func requestAwaitsFirstAnswer() {
    lock.lock()
    awaitingFirstAnswer += 1
    lock.unlock()
  }

  /// The first byte of answer arrived (or the request ended without one).
  func answerBegan() {
    lock.lock()
    awaitingFirstAnswer = max(0, awaitingFirstAnswer - 1)
    lock.unlock()
  }

  /// Hands the slot back: with the connection when it can carry another
  /// request (then to the first waiter, or to the idle stack), else the
  /// connection is closed and the slot goes to the first waiter or is freed.
  ///
  /// A connection that stays idle while requests on newly opened connections
  /// to the origin still wait for their first byte is closed after
  /// `idleGrace` (`closeIdleWhileOthersWait`): a server with a small pool of
  /// HTTP threads (llama-server's default is `max(np + 2, cores - 1)`,
  /// cpp-httplib) keeps a thread on each idle keep-alive connection for its
  /// keep-alive time (5 s) before it accepts the next, so a burst of new
  /// connections waits in 5 s steps behind the idle ones. Closing frees
  /// that thread. Not at once: against a server that queues requests itself
  /// (llama-server's slots) every first byte comes late, and a caller takes
  /// its connection again within the grace; closing at release would make
  /// that caller's next request open a connection, which keeps the rule true
  /// for every other caller: one connection per warm request, each left in
  /// TIME_WAIT.
  func release(_ socket: HTTP1Socket?, reusable: Bool) {
    var toClose: HTTP1Socket? = reusable ? nil : socket
    var scheduleSweep: Duration?
    var scheduleGraceCheck = false
    lock.lock()
    if reusable, let socket, closed {
      toClose = socket
      open -= 1
    } else if reusable, let socket {
      if !waiters.isEmpty {
        handOverLocked(Lease(socket: socket))
      } else {
        socket.idleSince = .now
        idle.append(socket)
        if awaitingFirstAnswer > 0, !graceCheckScheduled {
          graceCheckScheduled = true
          scheduleGraceCheck = true
        }
        if !sweepScheduled {
          sweepScheduled = true
          scheduleSweep = socket.idleTimeout
        }
      }
    } else if !waiters.isEmpty, !closed {
      handOverLocked(Lease(socket: nil))
    } else {
      open -= 1
    }
    lock.unlock()
    toClose?.close()
    if let scheduleSweep { self.scheduleSweep(after: scheduleSweep) }
    if scheduleGraceCheck { after(Self.idleGrace) { $0.closeIdleWhileOthersWait() } }
  }

  /// How long a connection may sit idle while requests on new connections
  /// wait for their first byte (see `release`): long enough for a caller
  /// to send its next request on busy cores, short beside the 5 s a server
  /// thread would hold it.
  static let idleGrace: Duration = .milliseconds(100)

  /// Closes the connections idle for `idleGrace` or more while requests on
  /// new connections still wait for their first byte; checks again while
  /// younger ones are idle.
  private func closeIdleWhileOthersWait() {
    lock.lock()
    let expired = awaitingFirstAnswer > 0 ? removeIdleLocked { idleFor, _ in idleFor >= Self.idleGrace } : []
    graceCheckScheduled = awaitingFirstAnswer > 0 && !idle.isEmpty
    let again = graceCheckScheduled
    if !expired.isEmpty { waiters.first?.wakeUp.signal() }
    lock.unlock()
    expired.forEach { $0.close() }
    if again { after(Self.idleGrace) { $0.closeIdleWhileOthersWait() } }
  }

  /// No thread waits on an idle connection: a one-shot timer sweeps the
  /// idle stack when the oldest may have expired, and schedules the next.
  private func scheduleSweep(after delay: Duration) {
    after(min(delay, .seconds(3600)) + .milliseconds(10)) { $0.sweep() }
  }

  /// Runs `work` on this pool after `delay` from a global queue, unless the
  /// pool is gone by then.
  private func after(_ delay: Duration, _ work: @escaping @Sendable (HTTP1ConnectionPool) -> Void) {
    let milliseconds = Int(delay / .milliseconds(1))
    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
      [weak self] in self.map(work)
    }
  }

  /// Closes every idle connection; later releases close theirs.
  func close() {
    lock.lock()
    closed = true
    let sockets = idle
    open -= idle.count
    idle = []
    lock.unlock()
    sockets.forEach { $0.close() }
  }

  /// The number of idle connections (for tests).
  var idleCount: Int {
    lock.lock()
    defer { lock.unlock() }
    return idle.count
  }

  /// Closes the idle connections whose time is up.
  private func sweep() {
    lock.lock()
    let expired = removeIdleLocked { idleFor, socket in idleFor >= socket.idleTimeout }
    let now = ContinuousClock.now
    let next = idle.compactMap { socket in socket.idleSince.map { socket.idleTimeout - (now - $0) } }.min()
    sweepScheduled = next != nil
    // Freed slots go to whoever waits first (it takes one when it wakes).
    waiters.first?.wakeUp.signal()
    lock.unlock()
    expired.forEach { $0.close() }
    if let next { scheduleSweep(after: max(next, .zero)) }
  }

  /// Removes from the idle stack (and the count of open ones) the
  /// connections `expired` picks by how long each has been idle, for the
  /// caller to close after unlocking; under `lock`.
  private func removeIdleLocked(where expired: (_ idleFor: Duration, HTTP1Socket) -> Bool) -> [HTTP1Socket] {
    let now = ContinuousClock.now
    var taken: [HTTP1Socket] = []
    idle.removeAll { socket in
      guard let since = socket.idleSince, expired(now - since, socket) else { return false }
      taken.append(socket)
      return true
    }
    open -= taken.count
    return taken
  }

  /// The most recently used usable idle connection, or a new slot, or nil
  /// at the limit. Idle connections past their time or no longer usable
  /// (the server closed them) are closed on the way.
  private func takeLocked() -> Lease? {
    let now = ContinuousClock.now
    while let socket = idle.popLast() {
      let fresh = socket.idleSince.map { now - $0 < socket.idleTimeout } ?? false
      if fresh, socket.isUsableWhenIdle {
        socket.idleSince = nil
        return Lease(socket: socket)
      }
      socket.close()
      open -= 1
    }
    guard open < limit else { return nil }
    open += 1
    return Lease(socket: nil)
  }
}
