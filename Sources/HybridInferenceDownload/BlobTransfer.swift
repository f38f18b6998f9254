import CHybridOS
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

/// Moves one file's bytes from `url` into its partial file, resuming what a
/// former run left, hashing each chunk as it is written (no second pass),
/// and puts the file in place once its size, SHA-256 and content check
/// hold. Every way a server can misbehave ends in a typed error with the
/// store consistent: the partial file is a prefix of the file its record
/// names, or is gone.
struct BlobTransfer {
  /// How many written bytes the kernel is asked to start writing to disk
  /// at a time: large enough to be one request to the disk, small enough
  /// that little is left for the fsync before the rename.
  static let writebackBytes: Int64 = 8 << 20

  let connection: DownloadConnection
  let url: URL
  let partial: PartialFile
  /// Where the verified file goes.
  let destination: String
  /// The size the file must have, when known before the transfer.
  let size: Int64?
  /// The SHA-256 the file must have, when known.
  let sha256: String?
  /// The content check (a GGUF model's) run on the finished bytes.
  let check: @Sendable (String) throws -> Void
  /// The repository file the bytes are of, for a hub download.
  var file: String? = nil

  /// Runs the transfer; `progress` sees the bytes on disk.
  func run(progress: inout ProgressGate) async throws {
    let directory = (destination as NSString).deletingLastPathComponent
    let resume = partial.resumable(sha256: sha256, size: size)
    var have = resume?.bytes ?? 0
    var headers: [String: String] = [:]
    if let resume, have > 0, !resume.record.validator.isEmpty {
      headers["Range"] = "bytes=\(have)-"
      headers["If-Range"] = resume.record.validator
    } else {
      have = 0
    }
    if let size { try DiskSpace.check(needed: size - have, in: directory) }
    var response = try await connection.send("GET", to: url, headers: headers)
    let shown = ModelSource.display(response.url)
    let status = response.head.statusCode
    let total: Int64?
    switch status {
    case 206 where have > 0:
      total = try checkedRange(response.head, resumingAt: have, url: shown)
    case 200:
      have = 0
      total = try checkedLength(response.head, url: shown)
    case 416 where have > 0 && have == size:
      // The partial holds the whole file: a former run stopped just before verifying.
      response.cancel()
      total = size
    default:
      response.cancel()
      if status == 416 { partial.discard() }
      throw HybridInferenceError.downloadFailed(url: shown, status: status, reason: Self.reason(for: status))
    }
    if let total { try DiskSpace.check(needed: total - have, in: directory) }
    let descriptor = try partial.openForWriting(keeping: have)
    defer { close(descriptor) }
    var hash = SHA256()
    if have > 0 { try hashExisting(descriptor, bytes: have, into: &hash) }
    if status == 200 {
      try partial.save(
        PartialFile.Record(validator: Self.validator(of: response.head), size: total, sha256: sha256, file: file))
    }
    progress.update(have, of: total)
    if status != 416 {
      have = try await receive(&response, into: descriptor, from: have, total: total, hash: &hash, progress: &progress)
    }
    if let total, have < total {
      throw HybridInferenceError.downloadFailed(
        url: shown, status: nil, reason: "the transfer ended after \(have) of \(total) bytes; the next download resumes"
      )
    }
    try finish(descriptor, hash: hash, url: shown)
    progress.update(have, of: total ?? have, final: true)
  }

  /// Reads the body into the partial file; returns the bytes it now holds.
  private func receive(
    _ response: inout DownloadConnection.Response, into descriptor: Int32, from start: Int64, total: Int64?,
    hash: inout SHA256, progress: inout ProgressGate
  ) async throws -> Int64 {
    let shown = ModelSource.display(response.url)
    // With no size known, the disk's free space bounds what a body may write.
    let limit = total ?? DiskSpace.available(in: (destination as NSString).deletingLastPathComponent) ?? .max
    let watch = StallWatch(limit: DownloadConnection.stallTimeout, stop: response.stopper)
    defer { watch.end() }
    var have = start
    var writtenBack = start
    do {
      while let chunk = try await response.nextChunk() {
        watch.saw()
        guard Int64(chunk.count) <= limit - have else {
          response.cancel()
          partial.discard()
          throw HybridInferenceError.downloadFailed(
            url: shown, status: nil, reason: "the server sent more than the \(limit) bytes the file has")
        }
        try write(chunk, to: descriptor, have: have, total: total)
        hash.update(chunk)
        have += Int64(chunk.count)
        // Writing back as the bytes come leaves the fsync before the rename
        // little to do; an error here only means the fsync does it all.
        if have - writtenBack >= Self.writebackBytes {
          _ = CHybridOS_start_writeback(descriptor, writtenBack, have - writtenBack)
          writtenBack = have
        }
        progress.update(have, of: total)
      }
    } catch let error as HybridInferenceError {
      throw error
    } catch {
      try Task.checkCancellation()
      throw watch.stalled ? stallFailure(shown) : DownloadConnection.failure(error, url: response.url)
    }
    try Task.checkCancellation()
    if watch.stalled { throw stallFailure(shown) }
    return have
  }

  private func stallFailure(_ url: String) -> HybridInferenceError {
    .downloadFailed(
      url: url, status: nil,
      reason: "the server sent nothing for \(DownloadConnection.stallTimeout); the next download resumes")
  }

  /// Writes all of `chunk`; a full disk is `insufficientDiskSpace`.
  private func write(_ chunk: Data, to descriptor: Int32, have: Int64, total: Int64?) throws(HybridInferenceError) {
    let failure: Int32? = chunk.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let count = systemWrite(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return count == 0 ? EIO : errno }
        offset += count
      }
      return nil
    }
    guard let failure else { return }
    if failure == ENOSPC || failure == EDQUOT {
      let directory = (destination as NSString).deletingLastPathComponent
      let needed = total.map { $0 - have } ?? Int64(chunk.count)
      throw .insufficientDiskSpace(needed: needed, available: DiskSpace.available(in: directory) ?? 0)
    }
    throw partial.writeFailure("cannot write \(partial.path)", code: failure)
  }

  /// Hashes the `bytes` a former run wrote, before the new ones follow.
  private func hashExisting(_ descriptor: Int32, bytes: Int64, into hash: inout SHA256) throws(HybridInferenceError) {
    var offset: Int64 = 0
    while offset < bytes {
      let count = Int(min(Int64(1 << 20), bytes - offset))
      guard let chunk = PrivateFile.read(descriptor, at: Int(offset), count: count) else {
        throw partial.writeFailure("cannot read \(partial.path)")
      }
      hash.update(chunk)
      offset += Int64(count)
    }
  }

  /// Checks the digest and the content, then syncs and moves the file into place.
  private func finish(_ descriptor: Int32, hash: SHA256, url: String) throws {
    let actual = hash.hexDigest
    if let sha256, actual != sha256 {
      partial.discard()
      throw HybridInferenceError.checksumMismatch(expected: sha256, actual: actual)
    }
    do {
      try check(partial.path)
    } catch {
      partial.discard()
      throw error
    }
    // The file is not secret: readable as huggingface_hub's blobs are.
    guard fsync(descriptor) == 0, fchmod(descriptor, 0o644) == 0 else {
      throw partial.writeFailure("cannot sync \(partial.path)")
    }
    try partial.finish(as: destination)
  }
}

/// The system's `write`, under a name the transfer's own `write` does not hide.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}
