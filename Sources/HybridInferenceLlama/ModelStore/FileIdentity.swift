import HybridInferenceCore
import HybridInferenceJinja

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Which file a path named, and in which state: device, inode, size, and
/// the modification and status-change times to the nanosecond.
///
/// The check reads a model file once and llama.cpp opens it again later, by
/// path; a file renamed over it in between (a downloader replacing the
/// model, or anyone who can write the directory) would be loaded unchecked.
/// So the check records the identity of the file it read, and the loader
/// opens the path, compares the open file's identity with it, and hands
/// llama.cpp that same open file (`/proc/self/fd/N`). The status-change time
/// cannot be set by a program (unlike the modification time, which `touch`
/// can put back), and changes with every write.
///
/// Not defended against: a process that writes into the checked file itself
/// while llama.cpp reads it. Only copying the file could be; such a process
/// can already replace the weights.
struct FileIdentity: Hashable, Sendable {
  var device: UInt64
  var inode: UInt64
  var size: Int
  var modified: Timestamp
  var changed: Timestamp
  var isDirectory: Bool
  /// A plain file, not a directory, pipe, socket or device.
  var isRegular: Bool

  struct Timestamp: Hashable, Sendable {
    var seconds: Int
    var nanoseconds: Int
  }

  /// The identity of the file `path` names now; nil when it cannot be stat'ed.
  static func of(path: String) -> FileIdentity? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    return FileIdentity(status)
  }

  /// The identity of the open file `descriptor`.
  static func of(descriptor: Int32) -> FileIdentity? {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    return FileIdentity(status)
  }

  private init(_ status: stat) {
    device = UInt64(truncatingIfNeeded: status.st_dev)
    inode = UInt64(truncatingIfNeeded: status.st_ino)
    size = Int(truncatingIfNeeded: status.st_size)
    isDirectory = status.st_mode & S_IFMT == S_IFDIR
    isRegular = status.st_mode & S_IFMT == S_IFREG
    #if canImport(Darwin)
      modified = Timestamp(status.st_mtimespec)
      changed = Timestamp(status.st_ctimespec)
    #else
      modified = Timestamp(status.st_mtim)
      changed = Timestamp(status.st_ctim)
    #endif
  }
}

extension FileIdentity.Timestamp {
  fileprivate init(_ time: timespec) {
    seconds = Int(time.tv_sec)
    nanoseconds = Int(time.tv_nsec)
  }
}
