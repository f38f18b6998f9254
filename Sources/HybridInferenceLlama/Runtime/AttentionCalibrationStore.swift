import CLlama
import Foundation
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where calibrated attention decisions are kept: in the process for every
/// model value, and beside the prompt cache's states when the model has one.
///
/// In the process, so that a calibration runs once per model file, llama.cpp
/// build, CPU, thread count, KV type and depth cap (`Key`), however many model
/// values load that file. On disk only in a `PromptCache.directory`, and only
/// because the prompt cache's key holds the attention setting: a decision that
/// changed from one process to the next would orphan every saved state. The
/// file is small JSON, written atomically (a temporary file renamed over it),
/// and read as hostile input: at most `maximumFileBytes`, a different key,
/// bad JSON or an unknown setting means calibrating again.
///
/// The decisions are behind a lock (`Locked`): model values on any task look
/// them up. Calibrations in flight are kept too, so that two requests that
/// make the first context at once share one measurement. A directory's
/// stored decision wins over the process's own, and the process's is written
/// to every directory that has none, so that a model value with a prompt
/// cache gets the same setting in this process and the next.
final class AttentionCalibrationStore: Sendable {
  static let shared = AttentionCalibrationStore()

  /// The most bytes read from a decision file: 64 KiB.
  static let maximumFileBytes = 64 << 10

  /// What a decision depends on, as text (the file's name hashes it, the file holds it whole).
  struct Key: Hashable, Sendable {
    let text: String

    init(
      model: ModelFingerprint, shape: AttentionCalibrationGraph.Shape, threads: Int, depths: [Int],
      pages: Bool = false
    ) {
      text = [
        "model \(model.description)", "build \(PromptCacheKey.build)", "cpu \(Self.cpu)", "threads \(threads)",
        "shape \(shape)", "depths \(depths.map(String.init).joined(separator: ","))",
        // Weights and KV cache on 2 MiB pages make every step faster
        // (`ModelMemory`); a decision timed on 4 KiB pages does not match.
        "weights and KV cache on 2 MiB pages \(pages)",
        // The rules a decision was made under: one stored under other rules
        // (attention alone, another margin, the weighted total alone, one
        // setting for every depth, contexts without an answer's room, the
        // slow-model check on the slower setting) does not match, and is
        // measured again.
        "calibration steps in contexts with 256 cells of answer room, slow only when both settings are, on then off where the two cross, else off when clearly faster in all and at the worst depth",
      ].joined(separator: "\n")
    }

    /// This CPU's model name and a checksum of its feature flags, read once.
    private static let cpu: String = {
      let cpu = CPUFeatures.current
      return "\(cpu.modelName ?? "unknown") \(Checksum64.of(Array(cpu.flags.sorted().joined(separator: " ").utf8)))"
    }()

    /// The decision file's name in a prompt cache directory.
    var fileName: String { "attention-\(String(Checksum64.of(Array(text.utf8)), radix: 16)).json" }
  }

  /// The decision as stored: the key it was made for, and its verdict.
  struct Record: Codable, Equatable, Sendable {
    var version = 1
    var key: String
    /// True for the fused kernel, false without, nil for even (the fallback decides).
    var flash: Bool?
    var reason: String
    /// The depth from which off, with `flash` true (`AttentionCalibration.Verdict.offFromDepth`).
    var offFromDepth: Int?
  }

  /// What the locks guard: the process's measurements, by key, and the
  /// verdicts settled for a (key, directory) pair.
  private struct Memory {
    var measured: [Key: Task<AttentionCalibration.Verdict, Never>] = [:]
    var settled: [String: AttentionCalibration.Verdict] = [:]
  }

  private let memory = Locked(Memory())

  /// The verdict for `key`. Without a directory: the process's, measured by
  /// `calibrate()` once however many ask at once. With one: the decision
  /// stored there, which wins over the process's (the directory's states were
  /// keyed by it), else the process's, written there. Each (key, directory)
  /// pair is settled once, so later requests only take a lock.
  func verdict(
    for key: Key, directory: URL?, calibrate: @escaping @Sendable () async -> AttentionCalibration.Verdict
  ) async -> AttentionCalibration.Verdict {
    let place = directory.map { "\($0.standardizedFileURL.path)\n\(key.text)" }
    if let place, let settled = memory.withLock({ $0.settled[place] }) { return settled }
    if let directory, let place, let stored = Self.stored(key: key, directory: directory) {
      memory.withLock { $0.settled[place] = stored }
      return stored
    }
    let task = memory.withLock { memory in
      if let known = memory.measured[key] { return known }
      let made = Task { await calibrate() }
      memory.measured[key] = made
      return made
    }
    let verdict = await task.value
    if verdict.isTransient {
      memory.withLock { _ = $0.measured.removeValue(forKey: key) }
      return verdict
    }
    if let directory, let place {
      Self.store(verdict, key: key, directory: directory)
      memory.withLock { $0.settled[place] = verdict }
    }
    return verdict
  }

  /// The stored verdict for `key`, or nil when there is none or it is not one
  /// (too long, not JSON, another version or key).
  static func stored(key: Key, directory: URL) -> AttentionCalibration.Verdict? {
    let path = directory.appendingPathComponent(key.fileName).path
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: maximumFileBytes + 1)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0, count <= maximumFileBytes,
      let record = try? JSONDecoder().decode(Record.self, from: Data(bytes.prefix(count))),
      record.version == 1, record.key == key.text, record.reason.utf8.count <= 4096,
      record.offFromDepth.map({ $0 > 0 && record.flash == true }) ?? true
    else { return nil }
    return AttentionCalibration.Verdict(
      flash: record.flash, reason: "\(record.reason), stored", offFromDepth: record.offFromDepth)
  }

  /// Writes `verdict` for `key` into `directory` (made 0700 if missing), as a
  /// 0600 file renamed into place; gives up silently, since the only cost of
  /// a missing file is a calibration in the next process.
  static func store(_ verdict: AttentionCalibration.Verdict, key: Key, directory: URL) {
    let record = Record(key: key.text, flash: verdict.flash, reason: verdict.reason, offFromDepth: verdict.offFromDepth)
    guard let data = try? JSONEncoder().encode(record),
      (try? FileManager.default.createDirectory(
        at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
    else { return }
    let path = directory.appendingPathComponent(key.fileName).path
    let temp = directory.appendingPathComponent(".\(key.fileName).\(getpid()).tmp").path
    let descriptor = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else { return }
    let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == data.count
    close(descriptor)
    if !written || rename(temp, path) != 0 { unlink(temp) }
  }
}
