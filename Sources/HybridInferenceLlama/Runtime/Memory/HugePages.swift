import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Linux's huge pages, asked for on memory already written
/// (`madvise(MADV_COLLAPSE)`, Linux 6.1 and later), and the memory limit
/// `MemoryPlan` weighs a model against.
enum HugePages {
  /// The kernel's transparent huge page (`hpage_pmd_size`): 2 MiB on x86-64
  /// and on arm64 with 4 KiB pages; a range is collapsed in aligned pieces
  /// of this size.
  static let size: Int =
    smallFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").flatMap(parseLimit).flatMap {
      $0 & ($0 - 1) == 0 ? $0 : nil  // a power of two, or the masks below mean nothing
    } ?? 2 << 20

  /// Whether this kernel collapses anonymous memory onto huge pages on
  /// request: probed once per process on two huge pages of memory of its
  /// own, written and then unmapped. False off Linux, before 6.1, where THP
  /// is compiled out or disabled for the process, and where a huge page is
  /// over 32 MiB (arm64 with 64 KiB pages: 512 MiB, too coarse for a model's
  /// buffers).
  static let collapseWorks: Bool = size <= 32 << 20 && probe()

  #if os(Linux)
    /// `MADV_COLLAPSE` from the kernel's uapi: Debian 12's glibc headers
    /// predate it.
    private static let adviceCollapse: Int32 = 25

    /// Moves the 2 MiB-aligned part of `size` bytes at `base` onto huge pages.
    /// Returns the bytes moved: 0 when the kernel refused (no THP, no memory
    /// to compact into a huge page, memory that is not anonymous such as a
    /// mapped file); nil when the range holds no aligned 2 MiB.
    static func collapse(_ base: UnsafeMutableRawPointer, size: Int) -> Int? {
      let address = UInt(bitPattern: base)
      let huge = UInt(Self.size)
      let (end, overflow) = address.addingReportingOverflow(UInt(max(0, size)))
      guard !overflow, address <= UInt.max - (huge - 1) else { return nil }
      let start = (address + huge - 1) & ~(huge - 1)
      let stop = end & ~(huge - 1)
      guard stop > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return nil }
      let length = Int(stop - start)
      return madvise(pointer, length, adviceCollapse) == 0 ? length : 0
    }

    private static func probe() -> Bool {
      let length = 2 * Self.size
      let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
      guard let mapped, mapped != MAP_FAILED else { return false }
      defer { munmap(mapped, length) }
      memset(mapped, 1, length)
      return (collapse(mapped, size: length) ?? 0) > 0
    }
  #else
    static func collapse(_ base: UnsafeMutableRawPointer, size: Int) -> Int? { nil }
    private static func probe() -> Bool { false }
  #endif

  /// The memory this process may use: the machine's physical memory, or its
  /// cgroup v2 limit (`memory.max`) when that is lower; nil when neither is known.
  static func memoryLimit() -> Int? {
    let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
    let limits = [physical > 0 ? physical : nil, cgroupLimit()].compactMap { $0 }
    return limits.min()
  }

  /// The lowest `memory.max` from this process's cgroup (v2) up to the root
  /// (a limit on a parent, such as a pod's or a slice's, binds too); nil when
  /// none is set or readable. `root` and `membership` are for tests.
  static func cgroupLimit(
    root: String = "/sys/fs/cgroup", membership: String? = smallFile("/proc/self/cgroup")
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
      let directory = ([root] + components).joined(separator: "/")
      if let text = smallFile(directory + "/memory.max"), let limit = parseLimit(text) { limits.append(limit) }
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

  /// The first 4 KiB of a small kernel file, as text.
  static func smallFile(_ path: String) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    guard let data = try? handle.read(upToCount: 4096) else { return nil }
    return String(decoding: data, as: UTF8.self)
  }
}
