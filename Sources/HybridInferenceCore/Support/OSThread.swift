internal import CHybridOS

/// Starts a detached OS thread, and says whether the OS gave one.
///
/// Why not `Foundation.Thread`: on Linux its `start()` drops what
/// `pthread_create` returns. At a thread or memory limit (`EAGAIN`, a
/// container's pids limit, a stack that cannot be mapped) the body then never
/// runs, and whoever waits on it (an HTTP exchange's stream, a template
/// render's continuation) waits for ever. Here the caller learns it at once
/// and ends its work with an error.
///
/// The thread is made in C (`CHybridOS_thread_start`): `pthread_create`'s
/// handle and start routine, and `pthread_setname_np`, are imported into
/// Swift with a different signature by glibc, musl and Darwin, and glibc's
/// module leaves `pthread_setname_np` out.
package enum OSThread {
  /// Runs `body` on a new thread with a stack of `stackSize` bytes, named
  /// `name` (cut to the 15 bytes Linux keeps) when one is given; false, with
  /// `body` not run and released, when the thread could not be made.
  package static func start(stackSize: Int, name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
    let box = Unmanaged.passRetained(Body(body))
    let run: CHybridOS_thread_body = { context in
      guard let context else { return }
      Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
    }
    let failure = CHybridOS_thread_start(max(0, stackSize), name, run, box.toOpaque())
    guard failure == 0 else {
      box.release()
      return false
    }
    return true
  }

  /// The body, boxed to cross the C start routine's `void *`.
  private final class Body: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }
}
