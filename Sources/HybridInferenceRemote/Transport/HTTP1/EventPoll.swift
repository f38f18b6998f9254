#if os(Linux)
  internal import CHybridOS

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Musl)
    import Musl
  #endif

  /// One epoll instance: the descriptors `HTTP1Poller` waits on, each with
  /// the number of the reading it belongs to.
  ///
  /// Why epoll: a descriptor is added to the set by the thread that wrote
  /// the request, while the poller waits, so a burst of 32 requests wakes the
  /// poller for none of them. With `poll` the list is the waiting thread's
  /// own, and each registration would wake it to rebuild the list: on two
  /// cores a server keeps busy, each wake takes the core from the thread
  /// that is writing the next request.
  ///
  /// The calls and `struct epoll_event` (packed on x86-64) come from
  /// `sys/epoll.h` through the `CHybridOS` module: the C library's own
  /// Swift module leaves that header out.
  ///
  /// `@unchecked Sendable`: the descriptor is set once, and epoll's calls are
  /// safe from any thread (the kernel serialises them); `ready` is used only
  /// by `wait`, which one thread calls at a time (the poller's). Closed and
  /// freed in `deinit`.
  final class EventPoll: @unchecked Sendable {
    /// Whether this OS has epoll: `HTTPTransport` uses the library's HTTP/1.1
    /// client only where it does.
    static let isSupported = true
    /// The most descriptors one `wait` reports; the rest are reported by the next.
    static let capacity = 256

    private let descriptor: Int32
    private let ready: UnsafeMutableBufferPointer<epoll_event>

    /// A new, close-on-exec instance; nil when the OS refuses one.
    init?() {
      let descriptor = epoll_create1(CHybridOS_EPOLL_CLOEXEC)
      guard descriptor >= 0 else { return nil }
      self.descriptor = descriptor
      ready = .allocate(capacity: Self.capacity)
      ready.initialize(repeating: epoll_event())
    }

    deinit {
      _ = close(descriptor)
      ready.deallocate()
    }

    /// Waits on `descriptor` for bytes to read, reported with `id`; false
    /// when the kernel refuses (out of memory, or past `max_user_watches`).
    func add(_ descriptor: Int32, id: UInt64) -> Bool {
      var event = epoll_event()
      event.events = CHybridOS_EPOLLIN
      event.data.u64 = id
      return epoll_ctl(self.descriptor, CHybridOS_EPOLL_CTL_ADD, descriptor, &event) == 0
    }

    /// Takes `descriptor` out of the set: before it is closed or handed on,
    /// or while its reading is parked. (Left in with no events asked for, a
    /// socket with an error or a hang-up would still be reported on every
    /// wait: epoll always reports those.)
    func remove(_ descriptor: Int32) {
      var event = epoll_event()
      _ = epoll_ctl(self.descriptor, CHybridOS_EPOLL_CTL_DEL, descriptor, &event)
    }

    /// Waits up to `milliseconds` for descriptors to be ready and puts their
    /// ids in `ids` (emptied first, its storage kept: this is every wake of
    /// the poller), at most `capacity`; false on a failure other than an
    /// interruption.
    func wait(milliseconds: Int32, ids: inout [UInt64]) -> Bool {
      ids.removeAll(keepingCapacity: true)
      let count = epoll_wait(descriptor, ready.baseAddress, Int32(ready.count), milliseconds)
      if count < 0 { return errno == EINTR }
      for event in ready.prefix(Int(count)) { ids.append(event.data.u64) }
      return true
    }
  }
#else
  /// Where the OS has no epoll (Darwin), there is no set: `HTTPTransport`
  /// sends every request through URLSession there, so no poller asks for
  /// one (one that did would end its readings with `resourceUnavailable`).
  final class EventPoll: Sendable {
    /// Whether this OS has epoll: `HTTPTransport` uses the library's HTTP/1.1
    /// client only where it does.
    static let isSupported = false

    init?() { return nil }

    func add(_ descriptor: Int32, id: UInt64) -> Bool { false }

    func remove(_ descriptor: Int32) {}

    func wait(milliseconds: Int32, ids: inout [UInt64]) -> Bool {
      ids.removeAll()
      return false
    }
  }
#endif
