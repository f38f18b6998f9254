import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One repository's folder in the Hugging Face hub cache, in the layout
/// huggingface_hub writes and llama.cpp reads:
///
///     <cache>/models--org--name/blobs/<sha256>                  the bytes
///     <cache>/models--org--name/snapshots/<commit>/<file>       a link to ../../blobs/<sha256>
///     <cache>/models--org--name/refs/<revision>                 the commit the revision named
///     <cache>/.locks/models--org--name/<sha256>.lock           held while the blob downloads
///
/// A blob is named by its LFS object id (the file's SHA-256), so a file of
/// two revisions or two file names is stored once. The lock file is the one
/// huggingface_hub takes (`flock` on the same path), so this library and
/// huggingface_hub never download one blob at once either.
struct HubCache: Sendable {
  /// A `refs/<revision>` file holds a 40-digit commit; anything larger is not one.
  static let maximumRefBytes = 256

  let root: URL
  let repository: String

  /// `models--org--name`.
  var folderName: String { "models--" + repository.replacingOccurrences(of: "/", with: "--") }
  var folder: String { root.appendingPathComponent(folderName).path }
  var blobs: String { folder + "/blobs" }
  var lockDirectory: String { root.path + "/.locks/" + folderName }

  func blobPath(_ name: String) -> String { blobs + "/" + name }
  func snapshotPath(commit: String, file: String) -> String { folder + "/snapshots/" + commit + "/" + file }
  func refPath(_ revision: String) -> String { folder + "/refs/" + revision }

  /// The commit `revision` names: itself when it is a commit hash, else
  /// what `refs/<revision>` says; nil when the cache does not know.
  func commit(of revision: String) -> String? {
    if HubCache.isCommit(revision) { return revision }
    guard let (descriptor, size) = try? PrivateFile.openOwn(refPath(revision), maximumBytes: Self.maximumRefBytes)
    else { return nil }
    defer { close(descriptor) }
    guard let bytes = PrivateFile.read(descriptor, at: 0, count: size) else { return nil }
    let commit = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return HubCache.isCommit(commit) ? commit : nil
  }

  /// The file of `revision` when the cache holds it: its snapshot path
  /// (a link to the blob, or a regular file where links were not made).
  /// With a pinned `sha256`, a snapshot that links to another blob is not it.
  func cachedFile(_ file: String, revision: String, sha256: String?) -> String? {
    guard let commit = commit(of: revision) else { return nil }
    let path = snapshotPath(commit: commit, file: file)
    var status = stat()
    guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
    if let sha256, let target = linkTarget(path), (target as NSString).lastPathComponent != sha256 { return nil }
    return path
  }

  /// Whether `blobs/<name>` is a regular file (a finished download).
  func hasBlob(_ name: String) -> Bool {
    var status = stat()
    return lstat(blobPath(name), &status) == 0 && status.st_mode & S_IFMT == S_IFREG
  }

  /// Makes `snapshots/<commit>/<file>` a relative link to `blobs/<blob>`
  /// (replacing whatever is there, itself, not its target), and records
  /// `refs/<revision>` unless the revision is the commit.
  func publish(blob: String, file: String, commit: String, revision: String) throws(HybridInferenceError) {
    let path = snapshotPath(commit: commit, file: file)
    let directory = (path as NSString).deletingLastPathComponent
    // From snapshots/<commit>/<a/b/file>: up past each folder of the file, the commit and snapshots.
    let ups = String(repeating: "../", count: file.split(separator: "/").count + 1)
    do {
      try PrivateFile.makeDirectory(directory)
      try PrivateFile.link(to: ups + "blobs/" + blob, at: path)
      if revision != commit {
        try PrivateFile.save(
          Array(commit.utf8), named: (revision as NSString).lastPathComponent,
          in: (refPath(revision) as NSString).deletingLastPathComponent)
      }
    } catch {
      throw .downloadFailed(
        url: "file://" + folder, status: nil, reason: "cannot record the file in the hub cache: \(error)")
    }
  }

  /// The target of the link at `path`, nil when it is not a link.
  private func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether `text` is a full commit hash: 40 lowercase hexadecimal digits.
  static func isCommit(_ text: String) -> Bool {
    text.utf8.count == 40 && text.utf8.allSatisfy(isHexDigit)
  }

  /// Whether `byte` is `0`-`9` or `a`-`f`.
  static func isHexDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
  }
}
