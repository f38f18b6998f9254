import Foundation
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
  /// Runs `body` on a new thread with a stack of `stackSize` bytes, named
  /// `name` (cut to the 15 bytes Linux keeps) when one is given; false, with
  /// `body` not run and released, when the thread could not be made.
  package static func start(stackSize: Int, name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
    var attributes = pthread_attr_t()
    guard pthread_attr_init(&attributes) == 0 else { return false }
    defer { pthread_attr_destroy(&attributes) }
    guard pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) == 0,
      pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) == 0
    else { return false }
    let comm = name.map { String(decoding: $0.utf8.prefix(15), as: UTF8.self) }
    let box = Unmanaged.passRetained(
      Body {
        // Named by the thread itself, through /proc (Glibc's
        // pthread_setname_np is not imported); it shows in top, gdb and /proc.
        if let comm { try? comm.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8) }
        body()
      })
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
