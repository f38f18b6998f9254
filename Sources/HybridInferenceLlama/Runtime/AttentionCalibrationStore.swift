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

/// Where calibrated attention decisions are kept: in the process, in this
/// machine's decision directory, and beside a prompt cache's states.
///
/// A decision is measured once per model file, llama.cpp build, CPU, thread
/// count, KV type, depth cap and page size (`Key`) on a machine, and every
/// later process reuses it, so that `.greedy` (or a fixed seed) gives the
/// same answer in every process: a setting timed again could tip the other
/// way on a busy machine, and the two settings round differently. The
/// machine's directory is `$HYBRID_INFERENCE_ATTENTION_DIR`, else `attention/`
/// in the set-up's cache (`DefaultModelLocation.cacheDirectory`); processes
/// measuring at once take turns on a lock there, and the later ones read the
/// first's decision. A prompt cache's directory keeps a copy too, and its
/// decision wins there: its states were keyed by it.
///
/// Each file is small JSON, written as `PrivateFile` writes (a temporary file
/// created exclusively, synced, renamed into place, mode 0600) and read as
/// hostile input: at most `maximumFileBytes`, a link, another user's file, a
/// different key, bad JSON or an unknown setting means measuring again. A
/// directory that cannot be written costs only that: the process's decision
/// stands for the process.
///
/// The decisions are behind a lock (`Locked`): model values on any task look
/// them up. Calibrations in flight are kept too, so that two requests that
/// make the first context at once share one measurement.
final class AttentionCalibrationStore: Sendable {
  static let shared = AttentionCalibrationStore(machineDirectory: defaultMachineDirectory())

  /// The environment variable that names the machine's decision directory.
  static let directoryVariable = "HYBRID_INFERENCE_ATTENTION_DIR"

  /// `$HYBRID_INFERENCE_ATTENTION_DIR`, else `attention` in the set-up's cache.
  static func defaultMachineDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
    if let path = environment[directoryVariable], !path.isEmpty { return URL(fileURLWithPath: path) }
    return URL(fileURLWithPath: DefaultModelLocation.cacheDirectory(environment: environment) + "/attention")
  }

  /// The most bytes read from a decision file: 64 KiB.
  static let maximumFileBytes = 64 << 10

  /// How long a process waits for another measuring the same machine's
  /// decisions before it measures on its own.
  static let lockPatience: Duration = .seconds(120)

  /// Where this store keeps the machine's decisions; nil keeps them in the process only.
  let machineDirectory: URL?

  init(machineDirectory: URL? = nil) {
    self.machineDirectory = machineDirectory
  }

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
        // The rule `AttentionCalibration.decide` follows, in words: a decision
        // stored under another rule does not match, and is measured again.
        // Whenever the rule changes, this line changes with it.
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

  /// The verdict for `key`: with a prompt cache `directory`, the decision
  /// stored there (its states were keyed by it); else this machine's, stored
  /// or measured by `calibrate()` once however many ask at once, and written
  /// to the machine's directory and to `directory`. Each (key, directory)
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
    let machine = machineDirectory
    let task = memory.withLock { memory in
      if let known = memory.measured[key] { return known }
      let made = Task { await Self.machineVerdict(for: key, in: machine, calibrate: calibrate) }
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

  /// The machine's verdict for `key`: the one stored in `directory`, else
  /// measured and stored there, holding the directory's lock throughout so
  /// that a process starting meanwhile reads it rather than measure again.
  private static func machineVerdict(
    for key: Key, in directory: URL?, calibrate: @Sendable () async -> AttentionCalibration.Verdict
  ) async -> AttentionCalibration.Verdict {
    guard let directory else { return await calibrate() }
    let lock = await MachineLock.take(in: directory.path, patience: lockPatience)
    defer { if let lock { close(lock) } }
    if let stored = stored(key: key, directory: directory) { return stored }
    let verdict = await calibrate()
    if !verdict.isTransient { store(verdict, key: key, directory: directory) }
    return verdict
  }

  /// The stored verdict for `key`, or nil when there is none or it is not one
  /// (too long, not JSON, another version or key).
  static func stored(key: Key, directory: URL) -> AttentionCalibration.Verdict? {
    let path = directory.appendingPathComponent(key.fileName).path
    guard let (descriptor, size) = try? PrivateFile.openOwn(path, maximumBytes: maximumFileBytes) else { return nil }
    defer { close(descriptor) }
    guard size > 0, let bytes = PrivateFile.read(descriptor, at: 0, count: size),
      let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)),
      record.version == 1, record.key == key.text, record.reason.utf8.count <= 4096,
      record.offFromDepth.map({ $0 > 0 && record.flash == true }) ?? true
    else { return nil }
    return AttentionCalibration.Verdict(
      flash: record.flash, reason: "\(record.reason), stored", offFromDepth: record.offFromDepth)
  }

  /// Writes `verdict` for `key` into `directory` (made 0700 if missing) as
  /// `PrivateFile` writes; gives up silently, since the only cost of a
  /// missing file is a calibration in the next process.
  static func store(_ verdict: AttentionCalibration.Verdict, key: Key, directory: URL) {
    let record = Record(key: key.text, flash: verdict.flash, reason: verdict.reason, offFromDepth: verdict.offFromDepth)
    guard let data = try? JSONEncoder().encode(record) else { return }
    try? PrivateFile.save(Array(data), named: key.fileName, in: directory.path)
  }
}
