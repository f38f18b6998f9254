import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Whether this machine can run the llama.cpp build the library is linked to.
///
/// A build made with native CPU optimisations uses instructions (AVX2, FMA, …)
/// that an older CPU lacks, and would crash with SIGILL on it. llama.cpp reports
/// the features it was compiled for; each must be in the CPU's own flags.
enum DeviceEligibility {
  /// The compiled features this CPU lacks; empty when it can run the build.
  /// Computed once: neither the build nor the CPU changes while the process runs.
  static let missingCPUFeatures: [String] = CPUFeatures.current.missing(
    compiled: LlamaBuildInfo.current.cpuFeatures)

  /// Memory this process could get now: the smaller of `MemAvailable` and
  /// what its cgroup still allows (`memory.max − memory.current`, cgroup v2),
  /// since a container's limit ends the process long before the host runs out.
  static func availableMemory() -> Int? {
    let meminfo = KernelFile.read("/proc/meminfo")
    let cgroup = CGroupMemory.current()
    return [meminfo.flatMap(memAvailable(meminfo:)), cgroup?.headroom].compactMap { $0 }.min()
  }

  /// `MemAvailable` from /proc/meminfo text, in bytes.
  static func memAvailable(meminfo: String) -> Int? {
    for line in meminfo.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
      let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
      return kilobytes.map { $0 * 1024 }
    }
    return nil
  }
}

/// The memory limit of this process's cgroup (v2), if it has one.
struct CGroupMemory: Equatable {
  /// `memory.max` in bytes.
  let limit: Int
  /// `memory.current` in bytes.
  let usage: Int

  /// What the cgroup still allows.
  var headroom: Int { max(0, limit - usage) }

  /// Parses the two files' text; nil when there is no limit (`max` in v2, a
  /// page-rounded `Int64.max` in v1).
  init?(max: String, current: String) {
    guard let limit = Int(max.trimmingCharacters(in: .whitespacesAndNewlines)),
      let usage = Int(current.trimmingCharacters(in: .whitespacesAndNewlines)),
      limit < 1 << 62
    else { return nil }
    self.limit = limit
    self.usage = usage
  }

  /// This process's cgroup limit: v2 (`0::/path`, `memory.max`), else v1
  /// (`N:memory:/path`, `memory.limit_in_bytes`), as /proc/self/cgroup names it.
  static func current() -> CGroupMemory? {
    guard let membership = KernelFile.read("/proc/self/cgroup") else {
      return nil
    }
    let lines = membership.split(separator: "\n")
    if let line = lines.first(where: { $0.hasPrefix("0::") }),
      let found = read("/sys/fs/cgroup" + line.dropFirst(3), "memory.max", "memory.current")
    {
      return found
    }
    guard let line = lines.first(where: { $0.split(separator: ":").dropFirst().first == "memory" }),
      let path = line.split(separator: ":", maxSplits: 2).last
    else { return nil }
    return read("/sys/fs/cgroup/memory" + path, "memory.limit_in_bytes", "memory.usage_in_bytes")
  }

  private static func read(_ directory: String, _ maxFile: String, _ currentFile: String) -> CGroupMemory? {
    guard let max = KernelFile.read(directory + "/" + maxFile),
      let current = KernelFile.read(directory + "/" + currentFile)
    else { return nil }
    return CGroupMemory(max: max, current: current)
  }

  /// The lowest `memory.max` from this process's cgroup (v2) up to the root
  /// (a limit on a parent, such as a pod's or a slice's, binds too); nil when
  /// none is set or readable. `root` and `membership` are for tests.
  static func lowestLimit(
    root: String = "/sys/fs/cgroup",
    membership: String? = KernelFile.read("/proc/self/cgroup")
  ) -> Int? {
    var path = ""
    if let line = membership?.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) {
      path = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
    }
    // Leaf to root; a path that climbs (`..`) is not followed.
    var components = path.split(separator: "/").map(String.init)
    if components.contains("..") { components = [] }
    var limits: [Int] = []
    while true {
      let file = ([root] + components + ["memory.max"]).joined(separator: "/")
      if let limit = KernelFile.read(file).flatMap(parseLimit) { limits.append(limit) }
      guard !components.isEmpty else { break }
      components.removeLast()
    }
    return limits.min()
  }

  /// A `memory.max` value: bytes, or nil for "max" and anything else.
  static func parseLimit(_ text: String) -> Int? {
    let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard let bytes = Int(value), bytes > 0 else { return nil }
    return bytes
  }
}
