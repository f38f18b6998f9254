import Foundation

/// A value behind a lock that ThreadSanitizer can see.
///
/// Synchronization's `Mutex` would do the same job, but on Linux its contended
/// path waits on a raw futex inside the uninstrumented Swift runtime: TSan never
/// sees that acquire and reports the critical sections that follow as data
/// races, which buries real ones (`make sanitize`). `NSLock` is a pthread mutex,
/// which TSan intercepts. The price is a heap object per lock; none of the
/// library's locks is taken more than a few times per token.
package final class Locked<Value> {
  private let lock = NSLock()
  private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with the value, holding the lock.
  package func withLock<R, Failure: Error>(_ body: (inout Value) throws(Failure) -> R) throws(Failure) -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
