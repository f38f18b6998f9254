#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// How the library creates and reads the files it keeps for itself (prompt
/// cache states, attention decisions, lock files), in directories others may
/// be able to write.
///
/// Creating: a file is written under a name no one can guess (random bits
/// from the system's generator) in the directory it ends in, created
/// exclusively and without following a link (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`), mode 0600, then renamed onto its name. A link planted at
/// the temporary name makes the create fail, never write through it; a link
/// planted at the final name is replaced by the rename, itself, never
/// followed. Directories the library makes are mode 0700; a directory the app
/// names is the app's, links in its path included.
///
/// Reading: a file is opened without following a link and without blocking
/// (a named pipe cannot stall the open), and used only when it is a regular
/// file of this user's no larger than the caller's bound; the caller then
/// reads its header before anything else (`read(_:at:count:)`).
package enum PrivateFile {
  /// Why a file was not written or not opened: the step, and `errno`'s reason.
  package struct Failure: Error, Equatable, CustomStringConvertible {
    package var step: String
    package var code: Int32

    package init(_ step: String, code: Int32 = errno) {
      self.step = step
      self.code = code
    }

    /// "cannot create a temporary file (File exists)".
    package var description: String { "\(step) (\(String(cString: strerror(code))))" }
  }

  /// Makes `path` and any missing parent, each made mode 0700. A path that
  /// exists as a directory (or a link to one the app made) is used as it is.
  package static func makeDirectory(_ path: String) throws(Failure) {
    // Most calls find the directory there: one stat, not one per component.
    var existing = stat()
    if stat(path, &existing) == 0, existing.st_mode & S_IFMT == S_IFDIR { return }
    var made = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
      made += "/" + component
      if mkdir(made, 0o700) == 0 { continue }
      let code = errno
      var status = stat()
      guard code == EEXIST, stat(made, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
        throw Failure("cannot make the directory \(made)", code: code == EEXIST ? ENOTDIR : code)
      }
    }
  }

  /// Writes `parts`, one after another, to a new file in `directory` named
  /// `.<random><suffix>`, created exclusively, not through a link, mode 0600;
  /// returns its path. `durable` syncs it to the disk before returning. On a
  /// failure nothing is left behind.
  package static func writeTemporary(
    _ parts: [[UInt8]], in directory: String, suffix: String, durable: Bool
  ) throws(Failure) -> String {
    var descriptor: Int32 = -1
    var path = ""
    // A name taken (by chance, or planted) is tried again under another.
    for _ in 0..<8 {
      path = directory + "/." + String(UInt64.random(in: .min ... .max), radix: 16) + suffix
      descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if descriptor >= 0 || errno != EEXIST { break }
    }
    guard descriptor >= 0 else { throw Failure("cannot create a file in \(directory)") }
    // fchmod: the umask may have narrowed the mode the create asked for.
    var failure: Failure? = fchmod(descriptor, 0o600) == 0 ? nil : Failure("cannot set the mode of \(path)")
    for part in parts where failure == nil {
      if !writeAll(descriptor, part) { failure = Failure("cannot write \(path)") }
    }
    if failure == nil, durable, fsync(descriptor) != 0 { failure = Failure("cannot sync \(path)") }
    close(descriptor)
    if let failure {
      unlink(path)
      throw failure
    }
    return path
  }

  /// Renames `temporary` onto `path`, replacing whatever is there (a link
  /// itself, not its target); on a failure `temporary` is removed.
  package static func place(_ temporary: String, at path: String) throws(Failure) {
    guard rename(temporary, path) == 0 else {
      let failure = Failure("cannot rename a file onto \(path)")
      unlink(temporary)
      throw failure
    }
  }

  /// `bytes` as `name` in `directory` (made 0700 if missing): a temporary
  /// file, synced, renamed into place.
  package static func save(_ bytes: [UInt8], named name: String, in directory: String) throws(Failure) {
    try makeDirectory(directory)
    try place(writeTemporary([bytes], in: directory, suffix: ".tmp", durable: true), at: directory + "/" + name)
  }

  /// Opens `.lock` in `directory` (made 0700 if missing) for `flock`: created
  /// mode 0600 if missing, never through a link, never truncated, so a link
  /// planted there makes the lock unavailable rather than a write target.
  /// The caller closes the descriptor, which releases the lock.
  package static func openLock(in directory: String) throws(Failure) -> Int32 {
    try makeDirectory(directory)
    return try openLockFile(directory + "/.lock")
  }

  /// Opens the lock file at `path` for `flock`, as `openLock(in:)` does; its
  /// directory must exist.
  package static func openLockFile(_ path: String) throws(Failure) -> Int32 {
    let lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard lock >= 0 else { throw Failure("cannot open the lock \(path)") }
    return lock
  }

  /// Makes `path` a symbolic link to `target`: made under a random name in
  /// the same directory, then renamed onto `path`, replacing whatever is
  /// there (a link or file itself, never what a link points to).
  package static func link(to target: String, at path: String) throws(Failure) {
    let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    for _ in 0..<8 {
      let temporary = directory + "/." + String(UInt64.random(in: .min ... .max), radix: 16) + ".link"
      if symlink(target, temporary) == 0 { return try place(temporary, at: path) }
      guard errno == EEXIST else { break }
    }
    throw Failure("cannot make a link in \(directory)")
  }

  /// Opens the library's own file at `path` for reading: not through a link,
  /// not blocking, a regular file of this user's of at most `maximumBytes`.
  /// Returns the descriptor (the caller closes it) and the file's size; a
  /// failure's `step` completes "the file ..." ("is not a regular file").
  package static func openOwn(_ path: String, maximumBytes: Int) throws(Failure) -> (descriptor: Int32, size: Int) {
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { throw Failure("cannot be opened") }
    var status = stat()
    let failure: Failure? =
      if fstat(descriptor, &status) != 0 {
        Failure("cannot be examined")
      } else if status.st_mode & S_IFMT != S_IFREG {
        Failure("is not a regular file", code: EINVAL)
      } else if status.st_uid != geteuid() {
        Failure("belongs to another user", code: EPERM)
      } else if status.st_size < 0 || Int(status.st_size) > maximumBytes {
        Failure("is larger than \(maximumBytes) bytes (\(status.st_size))", code: EFBIG)
      } else {
        nil
      }
    if let failure {
      close(descriptor)
      throw failure
    }
    return (descriptor, Int(status.st_size))
  }

  /// Exactly `count` bytes of `descriptor` from `offset`; nil when the file
  /// holds fewer or the read fails. The caller bounds `count` first.
  package static func read(_ descriptor: Int32, at offset: Int, count: Int) -> [UInt8]? {
    guard count >= 0, offset >= 0 else { return nil }
    var failed = false
    let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      initialized = 0
      while initialized < count {
        let got = pread(
          descriptor, buffer.baseAddress.map { $0 + initialized }, count - initialized, off_t(offset + initialized))
        if got < 0, errno == EINTR { continue }
        guard got > 0 else {
          failed = true
          return
        }
        initialized += got
      }
    }
    return failed ? nil : bytes
  }

  private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let count = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return false }
        offset += count
      }
      return true
    }
  }
}
