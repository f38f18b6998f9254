import Foundation
import HybridInferenceCore
import HybridInferenceRemote

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Puts a `ModelSource`'s file on disk, or finds it there.
///
/// `localPath()` only looks (no request): the file is there when its
/// verified bytes are in place. `run` fetches it: it asks the hub what the
/// revision's file is (a `.url` source knows), uses a blob already in the
/// cache when there is one, else takes the file's lock (so that two
/// processes download it once: the second waits, then finds it), and runs
/// the transfer. The lock is the one huggingface_hub takes for the blob.
package struct ModelDownload: Sendable {
  package let source: ModelSource
  package let store: ModelStore
  /// The content check a finished file must pass before it is moved into
  /// place (the GGUF checks, for a model).
  private let check: @Sendable (String) throws -> Void
  private let transport: HTTPTransport

  package init(
    source: ModelSource, store: ModelStore, transport: HTTPTransport? = nil,
    check: @escaping @Sendable (String) throws -> Void
  ) {
    self.source = source
    self.store = store
    self.transport = transport ?? DownloadConnection.sharedTransport
    self.check = check
  }

  /// The file's path when it is on disk, verified; nil when it is not.
  /// Reads the store only. Throws when the source names no safe path.
  package func localPath() throws(HybridInferenceError) -> String? {
    switch source.kind {
    case .huggingFace(let repository, let file, let revision):
      try checkNames()
      let cache = HubCache(root: store.hub().cache, repository: repository)
      return cache.cachedFile(file, revision: revision, sha256: source.sha256)
    case .url:
      let path = try urlDestination()
      return Self.isFile(path) ? path : nil
    }
  }

  /// Fetches the file (or finds it) and returns its path; `progress` sees
  /// the bytes on disk, monotonic, a few times a second, and once at the end.
  package func run(progress report: @escaping @Sendable (DownloadProgress) -> Void) async throws -> String {
    var progress = ProgressGate(report)
    if let path = try localPath() {
      let size = Self.fileSize(path)
      progress.update(size, of: size, final: true)
      return path
    }
    switch source.kind {
    case .huggingFace(let repository, let file, let revision):
      return try await fetchFromHub(repository: repository, file: file, revision: revision, progress: &progress)
    case .url(let url):
      let destination = try urlDestination()
      try DownloadConnection.checkHop(url, from: nil)
      let directory = (destination as NSString).deletingLastPathComponent
      try makeDirectory(directory)
      let connection = DownloadConnection(transport: transport, tokenOrigin: nil, token: nil)
      let transfer = BlobTransfer(
        connection: connection, url: url, partial: PartialFile(path: destination + ".partial"),
        destination: destination, size: nil, sha256: source.sha256, check: check)
      try await locked(destination + ".lock", done: { Self.isFile(destination) }, run: transfer, progress: &progress)
      let size = Self.fileSize(destination)
      progress.update(size, of: size, final: true)
      return destination
    }
  }

  private func fetchFromHub(
    repository: String, file: String, revision: String, progress: inout ProgressGate
  ) async throws -> String {
    try checkNames()
    let hub = store.hub()
    try DownloadConnection.checkHop(hub.endpoint, from: nil)
    guard
      let url = HubMetadata.resolveURL(endpoint: hub.endpoint, repository: repository, file: file, revision: revision)
    else { throw HybridInferenceError.invalidModelSource("the file \(SourceNames.quoted(file)) makes no URL") }
    let connection = DownloadConnection(transport: transport, tokenOrigin: Origin(hub.endpoint), token: hub.token)
    let metadata = try await HubMetadata.fetch(url, connection: connection)
    let expected = source.sha256 ?? (metadata.etag.utf8.count == 64 ? metadata.etag : nil)
    if let pinned = source.sha256, metadata.etag.utf8.count == 64, metadata.etag != pinned {
      throw HybridInferenceError.checksumMismatch(expected: pinned, actual: metadata.etag)
    }
    let blob = expected ?? metadata.etag
    let cache = HubCache(root: hub.cache, repository: repository)
    try makeDirectory(cache.blobs)
    try makeDirectory(cache.lockDirectory)
    let transfer = BlobTransfer(
      connection: connection, url: metadata.location, partial: PartialFile(path: cache.blobPath(blob) + ".partial"),
      destination: cache.blobPath(blob), size: metadata.size, sha256: expected, check: check, file: file)
    try await locked(
      cache.lockDirectory + "/" + blob + ".lock", done: { cache.hasBlob(blob) }, run: transfer, progress: &progress)
    try cache.publish(blob: blob, file: file, commit: metadata.commit, revision: revision)
    cache.removeStalePartials(of: file, keeping: blob)
    let path = cache.snapshotPath(commit: metadata.commit, file: file)
    let size = Self.fileSize(path)
    progress.update(size, of: size, final: true)
    return path
  }

  /// Runs `transfer` holding the lock at `path`, unless `done` says
  /// another holder finished it while this one waited.
  private func locked(
    _ path: String, done: () -> Bool, run transfer: BlobTransfer, progress: inout ProgressGate
  ) async throws {
    if done() { return }
    let lock: Int32
    do {
      lock = try await MachineLock.take(file: path)
    } catch let failure as PrivateFile.Failure {
      throw HybridInferenceError.downloadFailed(url: "file://" + path, status: nil, reason: failure.description)
    }
    defer { close(lock) }
    if done() { return }
    try await transfer.run(progress: &progress)
  }

  /// `<store>/<sha256>/<file name>` for a `.url` source.
  private func urlDestination() throws(HybridInferenceError) -> String {
    guard case .url(let url) = source.kind, let sha256 = source.sha256 else { return "" }
    try SourceNames.checkSHA256(sha256)
    let name = url.lastPathComponent
    try SourceNames.checkPath(name, naming: "URL's file name")
    guard !name.contains("/") else { throw .invalidModelSource("the URL names no file") }
    return store.directory.appendingPathComponent(sha256).appendingPathComponent(name).path
  }

  private func checkNames() throws(HybridInferenceError) {
    guard case .huggingFace(let repository, let file, let revision) = source.kind else { return }
    try SourceNames.checkRepository(repository)
    try SourceNames.checkPath(file, naming: "file")
    try SourceNames.checkPath(revision, naming: "revision")
    if let sha256 = source.sha256 { try SourceNames.checkSHA256(sha256) }
  }

  private func makeDirectory(_ path: String) throws(HybridInferenceError) {
    do {
      try PrivateFile.makeDirectory(path)
    } catch {
      throw .downloadFailed(url: "file://" + path, status: nil, reason: error.description)
    }
  }

  private static func isFile(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
  }

  /// The size of the file at `path`, through a link (a hub snapshot links
  /// to its blob); 0 when there is none.
  package static func fileSize(_ path: String) -> Int64 {
    var status = stat()
    return stat(path, &status) == 0 ? Int64(status.st_size) : 0
  }
}
