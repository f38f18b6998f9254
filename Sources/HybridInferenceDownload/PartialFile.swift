import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A download in progress: `<name>.partial`, the bytes so far, beside
/// `<name>.partial.json`, the record of what they are a prefix of (the
/// server's validator, the file's size and SHA-256), so that a later run
/// asks for the rest with `Range` and `If-Range` and the server sends it
/// only if the file is still the same.
///
/// The partial file is opened without following a link (one planted there
/// is removed, itself, and a new file made) and is only ever a prefix of
/// one response's bytes: a record that does not match, or a partial longer
/// than the file, starts the download over.
struct PartialFile {
  /// What the partial's bytes are the beginning of.
  struct Record: Codable, Equatable {
    /// `ETag` (strong only) or `Last-Modified`, as the server sent it.
    var validator: String
    /// The whole file's size, when the server said it.
    var size: Int64?
    /// The SHA-256 the file must have, when known.
    var sha256: String?
    /// The repository file the bytes are of (a hub download), so that a
    /// finished download of another version of it can remove them.
    var file: String? = nil
  }

  /// A record file is a few hundred bytes.
  static let maximumRecordBytes = 4096

  let path: String
  var recordPath: String { path + ".json" }

  /// The record and the size of the partial bytes, when both are there and
  /// agree with `sha256` and `size`; nil (and both removed) otherwise.
  func resumable(sha256: String?, size: Int64?) -> (record: Record, bytes: Int64)? {
    guard let record = readRecord(), record.sha256 == sha256, size == nil || record.size == size else {
      discard()
      return nil
    }
    var status = stat()
    guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
      record.size.map({ Int64(status.st_size) <= $0 }) ?? true
    else {
      discard()
      return nil
    }
    return (record, Int64(status.st_size))
  }

  /// Opens the partial for appending, made empty unless `keeping` bytes are
  /// to be kept (a resume); a link planted at its name is replaced, never
  /// followed.
  func openForWriting(keeping bytes: Int64) throws(HybridInferenceError) -> Int32 {
    var descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
    if descriptor < 0 || bytes == 0 {
      if descriptor >= 0 { close(descriptor) }
      unlink(path)
      descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    guard descriptor >= 0 else { throw writeFailure("cannot create \(path)") }
    guard ftruncate(descriptor, off_t(bytes)) == 0, lseek(descriptor, off_t(bytes), SEEK_SET) == off_t(bytes) else {
      close(descriptor)
      throw writeFailure("cannot resume \(path)")
    }
    return descriptor
  }

  /// Writes `record` beside the partial (a temporary file renamed into place).
  func save(_ record: Record) throws(HybridInferenceError) {
    let directory = (path as NSString).deletingLastPathComponent
    guard let bytes = try? JSONEncoder().encode(record) else { throw writeFailure("cannot encode the record") }
    do {
      try PrivateFile.save(Array(bytes), named: (recordPath as NSString).lastPathComponent, in: directory)
    } catch {
      throw writeFailure("cannot write \(recordPath): \(error)")
    }
  }

  /// Removes the partial bytes and their record.
  func discard() {
    unlink(path)
    unlink(recordPath)
  }

  /// Moves the finished bytes onto `final` (a link there is replaced, not
  /// followed) and removes the record.
  func finish(as final: String) throws(HybridInferenceError) {
    guard rename(path, final) == 0 else { throw writeFailure("cannot move the file onto \(final)") }
    unlink(recordPath)
  }

  func readRecord() -> Record? {
    guard let (descriptor, size) = try? PrivateFile.openOwn(recordPath, maximumBytes: Self.maximumRecordBytes) else {
      return nil
    }
    defer { close(descriptor) }
    guard let bytes = PrivateFile.read(descriptor, at: 0, count: size) else { return nil }
    return try? JSONDecoder().decode(Record.self, from: Data(bytes))
  }

  /// A failure to write the store, with `errno`'s reason.
  func writeFailure(_ step: String, code: Int32 = errno) -> HybridInferenceError {
    .downloadFailed(
      url: "file://" + path, status: nil, reason: "\(step) (\(String(cString: strerror(code))))")
  }
}
