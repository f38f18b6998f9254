import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The free space a download checks before it starts, so that a file that
/// cannot fit fails at once with `insufficientDiskSpace` rather than after
/// minutes of transfer.
enum DiskSpace {
  /// Bytes an unprivileged process may still write in the file system that
  /// holds `directory`; nil when the system does not say.
  static func available(in directory: String) -> Int64? {
    var info = statvfs()
    guard statvfs(directory, &info) == 0 else { return nil }
    let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(
      by: Int64(clamping: info.f_frsize))
    return overflow ? .max : bytes
  }

  /// Throws `insufficientDiskSpace` when `needed` bytes do not fit in `directory`.
  static func check(needed: Int64, in directory: String) throws(HybridInferenceError) {
    guard needed > 0, let available = available(in: directory), available < needed else { return }
    throw .insufficientDiskSpace(needed: needed, available: available)
  }
}
