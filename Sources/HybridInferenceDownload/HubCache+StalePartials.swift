import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension HubCache {
  /// The most entries of `blobs/` read when looking for stale partial files:
  /// a repository holds a few files, each a blob and perhaps a partial.
  static let maximumBlobEntries = 10_000

  /// Removes the partial downloads of other versions of `file` once
  /// `blob`, its current version, is in place: a download cut before the
  /// file changed on the hub leaves bytes no later run can resume (their
  /// blob is not the file's any more), as large as the model.
  ///
  /// A partial whose blob's lock another process holds is being written,
  /// and is left alone.
  func removeStalePartials(of file: String, keeping blob: String) {
    guard let directory = opendir(blobs) else { return }
    defer { closedir(directory) }
    var seen = 0
    while seen < Self.maximumBlobEntries, let entry = readdir(directory) {
      seen += 1
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      guard name.hasSuffix(".partial") else { continue }
      let other = String(name.dropLast(".partial".count))
      let partial = PartialFile(path: blobPath(name))
      guard other != blob, HubMetadata.isBlobName(other), partial.readRecord()?.file == file,
        let lock = try? PrivateFile.openLockFile(lockDirectory + "/" + other + ".lock")
      else { continue }
      if flock(lock, LOCK_EX | LOCK_NB) == 0 { partial.discard() }
      close(lock)
    }
  }
}
