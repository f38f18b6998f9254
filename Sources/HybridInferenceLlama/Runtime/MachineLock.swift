import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The lock processes on one machine take before measuring what they then
/// share (`AttentionCalibrationStore`): `flock` on `.lock` in the directory,
/// opened not through a link, mode 0600.
///
/// Taken without blocking, retried every 20 ms: a blocking `flock` would hold
/// one of the concurrency pool's few threads while another process measures.
/// `flock` is per open file description, so two tasks of one process exclude
/// each other as two processes do.
enum MachineLock {
  /// The lock's descriptor (closing it releases the lock), once taken; nil
  /// when the directory or its lock file cannot be made, or another holder
  /// kept it past `patience`: the caller then goes on unlocked, at the cost of
  /// measuring twice.
  static func take(in directory: String, patience: Duration) async -> Int32? {
    guard let lock = try? PrivateFile.openLock(in: directory) else { return nil }
    let deadline = ContinuousClock.now + patience
    while flock(lock, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline,
        (try? await Task.sleep(for: .milliseconds(20))) != nil
      else {
        close(lock)
        return nil
      }
    }
    return lock
  }
}
