#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The locks processes on one machine take before doing work they then
/// share: measuring an attention decision, downloading a model file.
/// `flock` on a lock file opened not through a link, mode 0600.
///
/// Taken without blocking, retried every 20 ms: a blocking `flock` would hold
/// one of the concurrency pool's few threads while another process works.
/// `flock` is per open file description, so two tasks of one process exclude
/// each other as two processes do; the kernel releases a lock whose process
/// died, so no lock outlives its holder.
package enum MachineLock {
  /// The lock of `directory` (`.lock` in it) once taken; nil when the
  /// directory or its lock file cannot be made, or another holder kept it
  /// past `patience`: the caller then goes on unlocked, at the cost of doing
  /// the work twice. Closing the descriptor releases the lock.
  package static func take(in directory: String, patience: Duration) async -> Int32? {
    guard let lock = try? PrivateFile.openLock(in: directory) else { return nil }
    if await acquire(lock, until: ContinuousClock.now + patience) { return lock }
    close(lock)
    return nil
  }

  /// The lock file at `path` (its directory must exist) once taken, waiting
  /// as long as another holder keeps it; throws `CancellationError` when the
  /// task is cancelled while it waits, and the file's failure when it cannot
  /// be opened. Closing the descriptor releases the lock.
  package static func take(file path: String) async throws -> Int32 {
    let lock = try PrivateFile.openLockFile(path)
    if await acquire(lock, until: nil) { return lock }
    close(lock)
    try Task.checkCancellation()
    throw PrivateFile.Failure("cannot lock \(path)")
  }

  /// Tries `flock` until it succeeds, `deadline` passes or the task is
  /// cancelled; true when the lock is held.
  private static func acquire(_ lock: Int32, until deadline: ContinuousClock.Instant?) async -> Bool {
    while flock(lock, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR, deadline.map({ ContinuousClock.now < $0 }) ?? true,
        (try? await Task.sleep(for: .milliseconds(20))) != nil
      else { return false }
    }
    return true
  }
}
