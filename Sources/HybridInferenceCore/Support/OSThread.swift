import Glibc

/// Starts a detached OS thread, and says whether the OS gave one.
///
/// Why not `Foundation.Thread`: on Linux its `start()` drops what
/// `pthread_create` returns. At a thread or memory limit (`EAGAIN`, a
/// container's pids limit, a stack that cannot be mapped) the body then never
/// runs, and whoever waits on it (an HTTP exchange's stream, a template
/// render's continuation) waits for ever. Here the caller learns it at once
/// and ends its work with an error.
package enum OSThread {
  /// Runs `body` on a new thread with a stack of `stackSize` bytes; false,
  /// with `body` not run and released, when the thread could not be made.
  package static func start(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
    var attributes = pthread_attr_t()
    guard pthread_attr_init(&attributes) == 0 else { return false }
    defer { pthread_attr_destroy(&attributes) }
    guard pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) == 0,
      pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) == 0
    else { return false }
    let box = Unmanaged.passRetained(Body(body))
    var thread = pthread_t()
    let started = pthread_create(
      &thread, &attributes,
      { context in
        guard let context else { return nil }
        Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
        return nil
      }, box.toOpaque())
    guard started == 0 else {
      box.release()
      return false
    }
    return true
  }

  /// The body, boxed to cross `pthread_create`'s `void *`.
  private final class Body: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
}
