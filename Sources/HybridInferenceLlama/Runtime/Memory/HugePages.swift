import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
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
    let text = KernelFile.read(path) ?? ""
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

  /// Whether memory advised `MADV_HUGEPAGE` gets huge pages as it is
  /// written (`rehouse`): the kernel collapses on request and its THP mode
  /// (`transparent_hugepage/enabled`) is `always` or `madvise`, not `never`.
  static let adviceWorks: Bool =
    collapseWorks && adviceWorks(enabled: KernelFile.read("/sys/kernel/mm/transparent_hugepage/enabled") ?? "")

  /// The THP mode from the `enabled` file's text, `always [madvise] never`:
  /// the bracketed word.
  static func adviceWorks(enabled: String) -> Bool {
    enabled.contains("[always]") || enabled.contains("[madvise]")
  }

  #if os(Linux)
    /// `MADV_COLLAPSE` from the kernel's uapi: Debian 12's glibc headers
    /// predate it.
    private static let adviceCollapse: Int32 = 25

    /// Moves the 2 MiB-aligned part of `size` bytes at `base` onto huge pages.
    /// Returns the bytes moved: 0 when the kernel refused (no THP, no memory
    /// to compact into a huge page, memory that is not anonymous such as a
    /// mapped file); nil when the range holds no aligned 2 MiB.
    static func collapse(_ base: UnsafeMutableRawPointer, size: Int) -> Int? {
      guard let (start, length) = aligned(base, size: size) else { return nil }
      return madvise(start, length, adviceCollapse) == 0 ? length : 0
    }

    /// Puts the 2 MiB-aligned part of `size` bytes at `base` on huge pages
    /// as it is next written, keeping its contents: the range is advised
    /// (`MADV_HUGEPAGE`), then each 2 MiB that holds only zeros is dropped
    /// (`MADV_DONTNEED`) and written again, which faults in a fresh, zeroed
    /// huge page, and each that holds data is copied out, dropped and written
    /// back onto one. Where no free huge page is found the kernel gives 4 KiB
    /// pages; the bytes are the same either way. Unlike `collapse` nothing is
    /// copied for the empty part, and a copy is a plain `memcpy`. Returns the
    /// bytes rehoused; nil when the range holds no aligned 2 MiB.
    static func rehouse(_ base: UnsafeMutableRawPointer, size: Int) -> Int? {
      guard let (start, length) = aligned(base, size: size) else { return nil }
      guard madvise(start, length, MADV_HUGEPAGE) == 0 else { return 0 }
      let chunk = Self.size
      let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 64)
      defer { scratch.deallocate() }
      for offset in stride(from: 0, to: length, by: chunk) {
        let piece = start + offset
        let empty = isZero(piece, count: chunk)
        if !empty { scratch.copyMemory(from: piece, byteCount: chunk) }
        guard madvise(piece, chunk, MADV_DONTNEED) == 0 else { continue }
        // Written at once, empty or not: a piece read before its first write
        // would map the kernel's shared huge zero page, which kernels before
        // 6.13 split into 4 KiB pages on that write (llama.cpp reads cells
        // past a stream's last, padded to 256). It was resident before the
        // drop (llama.cpp's clear), so this holds no more memory.
        if empty { piece.storeBytes(of: 0, as: UInt8.self) } else { piece.copyMemory(from: scratch, byteCount: chunk) }
      }
      return length
    }

    private static func isZero(_ pointer: UnsafeMutableRawPointer, count: Int) -> Bool {
      let words = UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: UInt64.self), count: count / 8)
      var index = 0
      while index < words.count {
        var any: UInt64 = 0
        for word in words[index..<min(index + 512, words.count)] { any |= word }
        if any != 0 { return false }
        index += 512
      }
      return true
    }

    /// The 2 MiB-aligned part of a range; nil when it holds none.
    private static func aligned(_ base: UnsafeMutableRawPointer, size: Int) -> (UnsafeMutableRawPointer, Int)? {
      let address = UInt(bitPattern: base)
      let huge = UInt(Self.size)
      let (end, overflow) = address.addingReportingOverflow(UInt(max(0, size)))
      guard !overflow, address <= UInt.max - (huge - 1) else { return nil }
      let start = (address + huge - 1) & ~(huge - 1)
      let stop = end & ~(huge - 1)
      guard stop > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return nil }
      return (pointer, Int(stop - start))
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
    static func rehouse(_ base: UnsafeMutableRawPointer, size: Int) -> Int? { nil }
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
