import Glibc

/// One epoll instance: the descriptors `HTTP1Poller` waits on, each with
/// the number of the reading it belongs to.
///
/// Why epoll: a descriptor is added to the set by the thread that wrote
/// the request, while the poller waits, so a burst of 32 requests wakes the
/// poller for none of them. With `poll` the list is the waiting thread's
/// own, and each registration had to wake it to rebuild the list: on two
/// cores a server keeps busy, each wake took the core from the thread that
/// was writing the next request.
///
/// Why `dlsym`: Swift's Glibc module does not carry `sys/epoll.h`, and a C
/// module of its own is a dependency DESIGN §10 does not give the remote
/// transport. The three calls are glibc's exported functions, resolved once;
/// `epoll_event` is laid out by hand, as the kernel's ABI fixes it: packed
/// (12 bytes) on x86_64, naturally aligned (16) elsewhere.
///
/// `@unchecked Sendable`: the descriptor is set once, and epoll's calls are
/// safe from any thread (the kernel serialises them); closed in `deinit`.
final class EventPoll: @unchecked Sendable {
  private struct Calls: Sendable {
    typealias Create = @convention(c) (Int32) -> Int32
    typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    let create: Create
    let control: Control
    let wait: Wait

    /// glibc's functions; nil where the C library exports none.
    static let resolved: Calls? = {
      // A nil handle is RTLD_DEFAULT: the symbols the process has loaded.
      guard let create = dlsym(nil, "epoll_create1"), let control = dlsym(nil, "epoll_ctl"),
        let wait = dlsym(nil, "epoll_wait")
      else { return nil }
      return Calls(
        create: unsafeBitCast(create, to: Create.self), control: unsafeBitCast(control, to: Control.self),
        wait: unsafeBitCast(wait, to: Wait.self))
    }()
  }

  /// `struct epoll_event`: its size and where its 64-bit `data` lies.
  #if arch(x86_64)
    static let eventBytes = 12
    private static let dataOffset = 4
  #else
    static let eventBytes = 16
    private static let dataOffset = 8
  #endif

  private static let readable: UInt32 = 0x001  // EPOLLIN
  /// `EPOLL_CTL_ADD`, `EPOLL_CTL_DEL`.
  private enum Operation: Int32 {
    case add = 1
    case remove = 2
  }

  private let calls: Calls
  private let descriptor: Int32

  /// A new, close-on-exec instance; nil when the OS refuses one.
  init?() {
    guard let calls = Calls.resolved else { return nil }
    let descriptor = calls.create(Int32(O_CLOEXEC))
    guard descriptor >= 0 else { return nil }
    self.calls = calls
    self.descriptor = descriptor
  }

  deinit { _ = Glibc.close(descriptor) }

  /// Waits on `descriptor` for bytes to read, reported with `id`; false
  /// when the kernel refuses (out of memory, or past `max_user_watches`).
  func add(_ descriptor: Int32, id: UInt64) -> Bool {
    control(.add, descriptor, events: Self.readable, id: id)
  }

  /// Takes `descriptor` out of the set: before it is closed or handed on,
  /// or while its reading is parked. (Left in with no events asked for, a
  /// socket with an error or a hang-up would still be reported on every
  /// wait: epoll always reports those.)
  func remove(_ descriptor: Int32) {
    _ = control(.remove, descriptor, events: 0, id: 0)
  }

  private func control(_ operation: Operation, _ target: Int32, events: UInt32, id: UInt64) -> Bool {
    var event = (UInt64(0), UInt64(0))
    return withUnsafeMutableBytes(of: &event) { bytes in
      bytes.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
      bytes.storeBytes(of: id, toByteOffset: Self.dataOffset, as: UInt64.self)
      return calls.control(descriptor, operation.rawValue, target, bytes.baseAddress) == 0
    }
  }

  /// Waits up to `milliseconds` for descriptors to be ready and puts their
  /// ids in `ids` (emptied first, its storage kept: this is every wake of
  /// the poller), read from `events` (room for `events.count / eventBytes`);
  /// false on a failure other than an interruption.
  func wait(into events: UnsafeMutableRawBufferPointer, milliseconds: Int32, ids: inout [UInt64]) -> Bool {
    ids.removeAll(keepingCapacity: true)
    let ready = calls.wait(descriptor, events.baseAddress, Int32(events.count / Self.eventBytes), milliseconds)
    if ready < 0 { return errno == EINTR }
    for index in 0..<Int(ready) {
      ids.append(events.loadUnaligned(fromByteOffset: index * Self.eventBytes + Self.dataOffset, as: UInt64.self))
    }
    return true
  }
}
