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
  static let size: Int = {
    let path = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    // A power of two, or the masks below mean nothing.
    guard let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes > 0, bytes & (bytes - 1) == 0
    else { return 2 << 20 }
    return bytes
  }()

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

  /// The memory this process may use: the machine's physical memory, or the
  /// lowest cgroup v2 limit over it (`CGroupMemory.lowestLimit`) when that is
  /// lower; nil when neither is known.
  static func memoryLimit() -> Int? {
    let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
    return [physical > 0 ? physical : nil, CGroupMemory.lowestLimit()].compactMap { $0 }.min()
  }
}
