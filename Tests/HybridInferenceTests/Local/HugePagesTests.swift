import XCTest

@testable import HybridInferenceLlama

#if canImport(Glibc)
  import Glibc
#endif

/// `HugePages.collapse` against this kernel: anonymous memory moves onto
/// 2 MiB pages (read back from /proc/self/smaps), a mapped file and a range
/// without an aligned 2 MiB do not, and nothing traps.
#if os(Linux)
  final class HugePagesTests: XCTestCase {
    /// The machine type CI runs on (Linux 6.18) collapses on request; a CI
    /// host that cannot would run every model on 4 KiB pages unnoticed.
    func testThisKernel_collapsesOnRequest_underCI() {
      guard ProcessInfo.processInfo.environment["CI"] == "true" else { return }
      XCTAssertTrue(HugePages.collapseWorks, "MADV_COLLAPSE refused on the CI machine")
    }

    func testWrittenAnonymousMemory_movesOntoHugePages() throws {
      let length = 8 << 20
      let mapped = try anonymous(length)
      defer { munmap(mapped, length) }
      memset(mapped, 7, length)
      let moved = try XCTUnwrap(HugePages.collapse(mapped, size: length), "8 MiB holds an aligned 2 MiB")
      guard HugePages.collapseWorks else {
        XCTAssertEqual(moved, 0)
        return
      }
      XCTAssertGreaterThanOrEqual(moved, 6 << 20)
      XCTAssertEqual(moved % HugePages.size, 0)
      XCTAssertGreaterThanOrEqual(try anonHugeKiB(at: mapped), moved >> 10, "smaps shows the huge pages")
      // The bytes are the same bytes.
      let bytes = mapped.assumingMemoryBound(to: UInt8.self)
      XCTAssertTrue((0..<length).allSatisfy { bytes[$0] == 7 })
    }

    func testARangeWithoutAnAligned2MiB_movesNothing_eitherWay() throws {
      let length = 4 << 20
      let mapped = try anonymous(length)
      defer { munmap(mapped, length) }
      let aligned = (UInt(bitPattern: mapped) + UInt(HugePages.size) - 1) & ~UInt(HugePages.size - 1)
      let start = try XCTUnwrap(UnsafeMutableRawPointer(bitPattern: aligned + 4096))
      let top = try XCTUnwrap(UnsafeMutableRawPointer(bitPattern: UInt.max - 4095))
      for move in [HugePages.collapse, HugePages.rehouse] {
        XCTAssertNil(move(start, HugePages.size - 8192))
        XCTAssertNil(move(mapped, 0))
        XCTAssertNil(move(mapped, -1))
        XCTAssertNil(move(top, 16 << 20), "an end past the address space")
      }
    }

    /// A KV cache as llama.cpp leaves it: cleared (every page written with
    /// zeros), then some cells filled from a saved state. Rehoused, every
    /// byte reads the same, and written memory is on huge pages.
    func testRehouse_keepsEveryByte_andPutsWrittenMemoryOnHugePages() throws {
      let length = 10 << 20
      let mapped = try anonymous(length)
      defer { munmap(mapped, length) }
      memset(mapped, 0, length)
      let bytes = mapped.assumingMemoryBound(to: UInt8.self)
      // Data in the first and fourth MiB and in the last byte; zeros between.
      for offset in stride(from: 0, to: 1 << 20, by: 4093) { bytes[offset] = UInt8(truncatingIfNeeded: offset | 1) }
      for offset in (3 << 20)..<(4 << 20) { bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31) }
      bytes[length - 1] = 0xEE
      let before = Array(UnsafeBufferPointer(start: bytes, count: length))
      let moved = try XCTUnwrap(HugePages.rehouse(mapped, size: length), "10 MiB holds an aligned 2 MiB")
      XCTAssertEqual(Array(UnsafeBufferPointer(start: bytes, count: length)), before, "the same bytes")
      guard HugePages.adviceWorks else { return }
      XCTAssertGreaterThanOrEqual(moved, 8 << 20)
      XCTAssertEqual(moved % HugePages.size, 0)
      // Cells filled after the rehouse fault in whole huge pages.
      memset(mapped, 5, length)
      let aligned = (UInt(bitPattern: mapped) + UInt(HugePages.size) - 1) & ~UInt(HugePages.size - 1)
      let start = try XCTUnwrap(UnsafeMutableRawPointer(bitPattern: aligned))
      XCTAssertGreaterThanOrEqual(try anonHugeKiB(at: start), moved >> 10, "smaps shows the huge pages")
    }

    func testTHPMode_isTheBracketedWord() {
      XCTAssertTrue(HugePages.adviceWorks(enabled: "always [madvise] never\n"))
      XCTAssertTrue(HugePages.adviceWorks(enabled: "[always] madvise never"))
      XCTAssertFalse(HugePages.adviceWorks(enabled: "always madvise [never]"))
      XCTAssertFalse(HugePages.adviceWorks(enabled: ""))
    }

    /// The machine type CI runs on (THP `madvise`) puts advised memory on huge
    /// pages as it is written.
    func testThisKernel_faultsAdvisedMemoryOnHugePages_underCI() {
      guard ProcessInfo.processInfo.environment["CI"] == "true" else { return }
      XCTAssertTrue(HugePages.adviceWorks, "THP set to never on the CI machine")
    }

    /// A mapped file is the page cache's: refused on this machine type's
    /// filesystem (the library never advises weights it leaves mapped); a
    /// kernel with read-only file THP may move it. Either way the bytes read
    /// the same.
    func testAMappedFile_readsTheSameBytes_movedOrNot() throws {
      let path = try LocalTestModels.require(LocalTestModels.defaultPath)
      let descriptor = open(path, O_RDONLY)
      XCTAssertGreaterThanOrEqual(descriptor, 0)
      defer { close(descriptor) }
      let length = 8 << 20
      let mapped = try XCTUnwrap(mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0))
      XCTAssertNotEqual(mapped, MAP_FAILED)
      defer { munmap(mapped, length) }
      let sum = { (0..<length).reduce(0) { $0 &+ Int(mapped.load(fromByteOffset: $1, as: UInt8.self)) } }
      let before = sum()
      let moved = try XCTUnwrap(HugePages.collapse(mapped, size: length))
      XCTAssertTrue(moved == 0 || (moved % HugePages.size == 0 && moved <= length), "\(moved)")
      XCTAssertEqual(sum(), before)
    }

    /// `length` bytes of anonymous memory of this test's own.
    private func anonymous(_ length: Int) throws -> UnsafeMutableRawPointer {
      let mapped = try XCTUnwrap(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
      XCTAssertNotEqual(mapped, MAP_FAILED)
      return mapped
    }

    /// AnonHugePages of the /proc/self/smaps entry that holds `address`, in KiB.
    private func anonHugeKiB(at address: UnsafeMutableRawPointer) throws -> Int {
      let smaps = try XCTUnwrap(KernelFile.read("/proc/self/smaps"))
      let target = UInt(bitPattern: address)
      var inside = false
      for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
          let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
          inside = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
        } else if inside, fields.first == "AnonHugePages:", fields.count >= 2, let kib = Int(fields[1]) {
          return kib
        }
      }
      return 0
    }
  }
#endif
