import CLlama
import Dispatch
import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The files of a `PromptCache`: the index (their names), the lock that
/// processes sharing the directory take, writes, loads and eviction.
///
/// The index is the directory itself: a file's name holds its key, the
/// checksum of its tokens and their count (`PromptCacheFile.name`), so the
/// longest saved prefix of a prompt is found from one listing, with one
/// checksum per candidate length, and never goes stale: a file appears in the
/// index the moment it is renamed into place, whole, and leaves it when
/// unlinked. No second file to keep in step, or to find damaged.
///
/// The lock is `flock` on `.lock` in the directory: exclusive while a state
/// is renamed into place and what it replaces and what exceeds the limit are
/// removed, or the cache is emptied; shared while a load lists and opens.
/// An open file stays readable when another process unlinks it, so a load
/// reads outside the lock. `flock` is per open file description, so the
/// threads of one process exclude each other as processes do.
///
/// Every file is created and opened as `PrivateFile` says: a state is
/// written to a temporary file of an unguessable name, created exclusively
/// and not through a link, mode 0600, and renamed onto its name (replacing a
/// link planted there, not following it); a file is read only when it is a
/// regular file of this user's, never through a link, its header first.
///
/// Sendable as it is: the path and limit are constants, and writes run one
/// at a time on their serial queue.
final class PromptCacheDirectory: Sendable {
  let path: String
  let maximumBytes: Int
  /// Writes one state at a time, off the llama thread.
  private let writer = DispatchQueue(label: "hybrid-inference.prompt-cache.write")

  /// Temp files of another process older than this are left over from a
  /// crash, and removed by eviction.
  private static let staleTemp: TimeInterval = 600

  init(path: String, maximumBytes: Int) {
    self.path = path
    self.maximumBytes = maximumBytes
  }

  // MARK: Lock and index

  /// Runs `body` holding the directory's lock (`LOCK_EX` or `LOCK_SH`);
  /// nil when the directory or its lock file cannot be made.
  private func locked<T>(_ operation: Int32, _ body: () throws -> T) rethrows -> T? {
    guard let lock = try? PrivateFile.openLock(in: path) else { return nil }
    defer { close(lock) }
    while flock(lock, operation) != 0 {
      guard errno == EINTR else { return nil }
    }
    return try body()
  }

  /// The states the directory holds, from their names.
  private func index() -> [PromptCacheFile] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).compactMap(PromptCacheFile.init(name:))
  }

  // MARK: Loading

  /// The longest saved prefix of `prompt` for any of `keys` (the whole
  /// prompt included), longer than `atLeast` tokens, read and checked: its
  /// key, token count and state; of two as long, the earlier key's. One
  /// listing of the directory for all the keys. Files that fail a check are
  /// logged, removed and skipped.
  func load(
    prompt: [llama_token], keys: [UInt64], longerThan atLeast: Int, tag: [UInt8], log: LogHandler
  ) -> (key: UInt64, tokens: Int, state: [UInt8])? {
    func rank(_ entry: PromptCacheFile) -> Int { keys.firstIndex(of: entry.key) ?? keys.count }
    let candidates = locked(LOCK_SH) {
      index().filter { keys.contains($0.key) && $0.tokenCount > atLeast && $0.tokenCount <= prompt.count }
        .sorted { ($0.tokenCount, rank($1)) > ($1.tokenCount, rank($0)) }
    }
    for entry in candidates ?? [] where entry.isPrefix(of: prompt) {
      let filePath = path + "/" + entry.name
      let opened: (descriptor: Int32, size: Int)
      do {
        opened = try PrivateFile.openOwn(filePath, maximumBytes: maximumBytes)
      } catch {
        // ENOENT: evicted since the listing. A link, a pipe or another user's file is not
        // ours to remove; a file of ours too large to be a state is.
        guard error.code != ENOENT else { continue }
        if error.code == EFBIG { locked(LOCK_EX) { _ = unlink(filePath) } }
        log.log(
          LogRecord(level: .warning, category: .local, message: "prompt cache: ignored \(entry.name), which \(error)"))
        continue
      }
      let descriptor = opened.descriptor
      defer { close(descriptor) }
      do {
        let state = try entry.readState(descriptor: descriptor, size: opened.size, prompt: prompt, tag: tag)
        _ = futimens(descriptor, nil)  // used now: eviction goes by last use
        return (entry.key, entry.tokenCount, state)
      } catch {
        log.log(
          LogRecord(
            level: .warning, category: .local,
            message: "prompt cache: ignored \(entry.name), which \(error.reason); removed it"))
        locked(LOCK_EX) { _ = unlink(filePath) }
      }
    }
    return nil
  }

  // MARK: Saving

  /// Writes `state` for `tokens` on the write queue, inside `writes`: into a
  /// temp file of mode 0600, renamed into place, then removes the
  /// conversation states it extends, of `key` or of `replacing` (the keys
  /// of the context's other attention setting, whose states it loads
  /// rewritten), and evicts past `maximumBytes`.
  func save(
    tokens: [llama_token], state: [UInt8], key: UInt64, replacing: [UInt64], isShareable: Bool,
    writes: PromptCacheWrites, log: LogHandler
  ) {
    writes.group.enter()
    writer.async {
      defer { writes.group.leave() }
      let clock = ContinuousClock.now
      self.writeFile(
        tokens: tokens, state: state, key: key, replacing: Set(replacing + [key]), isShareable: isShareable, log: log)
      writes.recordWrite(clock.duration(to: .now))
    }
  }

  private func writeFile(
    tokens: [llama_token], state: [UInt8], key: UInt64, replacing: Set<UInt64>, isShareable: Bool, log: LogHandler
  ) {
    let file = PromptCacheFile(key: key, tokens: tokens, isShareable: isShareable)
    let header = file.header(state: state)
    let size = header.count + tokens.count * MemoryLayout<llama_token>.size + state.count
    func warn(_ message: String) {
      log.log(LogRecord(level: .warning, category: .local, message: "prompt cache: \(message)"))
    }
    guard size <= maximumBytes else {
      warn("a state of \(tokens.count) tokens (\(size) bytes) exceeds maximumBytes (\(maximumBytes)); not saved")
      return
    }
    let temp: String
    do {
      try PrivateFile.makeDirectory(path)
      let little = tokens.map(\.littleEndian)
      // Not synced: a state torn by a crash fails its checksums and is
      // removed, and a lost one costs one prefill; a sync would delay `respond`.
      temp = try PrivateFile.writeTemporary(
        [header, little.withUnsafeBytes { Array($0) }, state], in: path, suffix: ".kvtmp", durable: false)
    } catch {
      warn("cannot write in \(path): \(error)")
      return
    }
    let placed = locked(LOCK_EX) { () -> PrivateFile.Failure? in
      do throws(PrivateFile.Failure) {
        try PrivateFile.place(temp, at: path + "/" + file.name)
      } catch {
        return error
      }
      replaceExtended(by: file, tokens: tokens, keys: replacing)
      evict()
      return nil
    }
    switch placed {
    case nil:
      // The lock itself failed: the temporary file is still there.
      warn("cannot place a state in \(path) (\(String(cString: strerror(errno))))")
      unlink(temp)
    case .some(.some(let failure)): warn("cannot place a state in \(path): \(failure)")
    case .some(nil): break
    }
  }

  /// Removes the conversation states of `keys` whose tokens `file`'s
  /// extend: a turn's state replaces its prefix's, so a conversation of n
  /// turns keeps one file, not n, also across a context's switch of
  /// attention setting at a crossing (the prefix saved under the other
  /// setting's key is as superseded). Shareable openings stay: other
  /// conversations start with them.
  private func replaceExtended(by file: PromptCacheFile, tokens: [llama_token], keys: Set<UInt64>) {
    for entry in index()
    where keys.contains(entry.key) && !entry.isShareable && entry.tokenCount < file.tokenCount
      && entry.isPrefix(of: tokens)
    {
      unlink(path + "/" + entry.name)
    }
  }

  // MARK: Size

  /// The cache's files (states, and temp files), with size and last use.
  private func files() -> [(name: String, size: Int, used: Date)] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.compactMap { name in
      guard PromptCacheFile(name: name) != nil || name.hasSuffix(".kvtmp") else { return nil }
      guard let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name),
        attributes[.type] as? FileAttributeType == .typeRegular
      else { return nil }
      let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
      return (name, size, attributes[.modificationDate] as? Date ?? .distantPast)
    }
  }

  /// Removes the least recently used states until the rest fit
  /// `maximumBytes`, and temp files a crash left behind. Under the lock.
  private func evict() {
    let now = Date()
    var total = 0
    var states: [(name: String, size: Int, used: Date)] = []
    for file in files() {
      if file.name.hasSuffix(".kvtmp") {
        if now.timeIntervalSince(file.used) > Self.staleTemp { unlink(path + "/" + file.name) }
        continue
      }
      total += file.size
      states.append(file)
    }
    for file in states.sorted(by: { $0.used < $1.used }) where total > maximumBytes {
      if unlink(path + "/" + file.name) == 0 { total -= file.size }
    }
  }

  /// Bytes of states and temp files in the directory now.
  var usage: Int { files().reduce(0) { $0 + $1.size } }

  /// Removes every file the cache wrote (the lock file stays); a file
  /// another process removed meanwhile is no error.
  func removeAll() throws {
    try locked(LOCK_EX) {
      for file in files() where unlink(path + "/" + file.name) != 0 && errno != ENOENT {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
      }
    }
  }
}

/// The states one request saves, which its `respond` waits for: each is
/// on disk (or given up, logged) when `finished()` returns.
final class PromptCacheWrites: Sendable {
  let group = DispatchGroup()
  private let durations = Locked<(copies: [Duration], writes: [Duration])>(([], []))

  /// A state copied out of llama.cpp on the scheduler's lane, in `duration`.
  func recordCopy(_ duration: Duration) { durations.withLock { $0.copies.append(duration) } }

  /// A state checked and written by the write queue, in `duration`.
  func recordWrite(_ duration: Duration) { durations.withLock { $0.writes.append(duration) } }

  /// What each save cost: on the llama thread, and on the write queue.
  var costs: (copies: [Duration], writes: [Duration]) { durations.withLock { $0 } }

  /// Logs what the saves cost, at `.debug`: "prompt cache: saved 2 states,
  /// copy 4.1 ms, write 20.3 ms" (the benchmark reads it).
  func log(to handler: LogHandler) {
    let (copies, writes) = costs
    guard !copies.isEmpty else { return }
    let milliseconds = Self.milliseconds
    handler.log(
      LogRecord(
        level: .debug, category: .local,
        message:
          "prompt cache: saved \(writes.count) states, copy \(milliseconds(copies)) ms, write \(milliseconds(writes)) ms"
      ))
  }

  /// The sum of `durations` in milliseconds, one decimal, for log lines.
  static func milliseconds(_ durations: [Duration]) -> String {
    let (seconds, attoseconds) = durations.reduce(Duration.zero, +).components
    return String(format: "%.1f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
  }

  /// Returns once every state this request saved is written.
  func finished() async {
    await withCheckedContinuation { continuation in
      group.notify(queue: .global()) { continuation.resume() }
    }
  }
}
