import Foundation

/// SHA-256 (FIPS 180-4) in Swift: what `SHA256` runs where the process has
/// no OpenSSL to call, and what tests check OpenSSL's digests against. Any
/// split of the input gives the same digest: bytes that do not fill a 64-byte
/// block wait in the value until the next `update` or `finalize()`.
struct PortableSHA256: Sendable {
  /// The eight working words between blocks (H0 … H7).
  private var state = State()
  /// The bytes of a block not yet complete, `buffered` of them.
  private var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
  private var buffered = 0
  /// Bytes hashed so far. It wraps (`&+`) past 2^64 bytes rather than trap;
  /// FIPS 180-4 defines no digest for messages of 2^64 bits or more, so the
  /// wrapped length only has to keep the process alive, which it does.
  private var byteCount: UInt64 = 0

  /// An empty hash: `finalize()` on it gives the digest of no bytes.
  init() {}

  /// Hashes `bytes` after those given before.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard var input = bytes.baseAddress, bytes.count > 0 else { return }
    var remaining = bytes.count
    byteCount &+= UInt64(remaining)
    PortableSHA256.withScratch { schedule, constants in
      if buffered > 0 {
        let taken = min(64 - buffered, remaining)
        withUnsafeMutableBytes(of: &buffer) { block in
          block.baseAddress.map { ($0 + buffered).copyMemory(from: input, byteCount: taken) }
        }
        buffered += taken
        input += taken
        remaining -= taken
        guard buffered == 64 else { return }
        let block = buffer
        withUnsafeBytes(of: block) { full in
          full.baseAddress.map { PortableSHA256.compress(&state, $0, schedule, constants) }
        }
        buffered = 0
      }
      // Whole blocks straight from the caller's bytes: no copy.
      while remaining >= 64 {
        PortableSHA256.compress(&state, input, schedule, constants)
        input += 64
        remaining -= 64
      }
      if remaining > 0 {
        withUnsafeMutableBytes(of: &buffer) { block in
          block.baseAddress.map { $0.copyMemory(from: input, byteCount: remaining) }
        }
        buffered = remaining
      }
    }
  }

  /// Hashes `bytes` after those given before.
  mutating func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// The 32-byte digest of everything given so far. It works on a copy, so
  /// the value can go on taking bytes after it.
  func finalize() -> [UInt8] {
    var copy = self
    // The length in bits, modulo 2^64 (`&*`): see `byteCount`.
    let bitLength = byteCount &* 8
    // 0x80, zeros up to 56 bytes into a block, then the length big-endian.
    var tail = [UInt8](repeating: 0, count: (buffered < 56 ? 56 : 120) - buffered + 8)
    tail[0] = 0x80
    for index in 0..<8 {
      tail[tail.count - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))
    }
    copy.update(tail)
    let words = copy.state
    var digest = [UInt8]()
    digest.reserveCapacity(32)
    for word in [words.a, words.b, words.c, words.d, words.e, words.f, words.g, words.h] {
      for shift in stride(from: 24, through: 0, by: -8) {
        digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
      }
    }
    return digest
  }
}

extension PortableSHA256 {
  /// The working words a … h.
  fileprivate struct State: Sendable {
    var a: UInt32 = 0x6a09_e667
    var b: UInt32 = 0xbb67_ae85
    var c: UInt32 = 0x3c6e_f372
    var d: UInt32 = 0xa54f_f53a
    var e: UInt32 = 0x510e_527f
    var f: UInt32 = 0x9b05_688c
    var g: UInt32 = 0x1f83_d9ab
    var h: UInt32 = 0x5be0_cd19
  }

  /// The round constants: the first 32 bits of the fractional parts of the
  /// cube roots of the first 64 primes.
  private static let roundConstants: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  /// Runs `body` with a 64-word message schedule on the stack and the round
  /// constants, once per `update` rather than once a block, so that the
  /// block loop allocates nothing and checks no bounds.
  private static func withScratch(
    _ body: (UnsafeMutablePointer<UInt32>, UnsafePointer<UInt32>) -> Void
  ) {
    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
      roundConstants.withUnsafeBufferPointer { constants in
        guard let scheduleBase = schedule.baseAddress, let constantsBase = constants.baseAddress else { return }
        body(scheduleBase, constantsBase)
      }
    }
  }

  @inline(__always)
  private static func rotate(_ x: UInt32, _ n: UInt32) -> UInt32 {
    (x &>> n) | (x &<< (32 &- n))
  }

  /// One round, written for the caller to rotate the names of the working
  /// words instead of moving eight values: only `d` and `h` change.
  @inline(__always)
  private static func round(
    _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
    _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ constantPlusWord: UInt32
  ) {
    // Σ1(e) and Σ0(a) as the standard writes them: the three rotations of
    // each run side by side, where a nested form (one register, each
    // rotation waiting for the one before) lengthens the chain from one
    // round's e to the next.
    let sigma1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
    let choose = g ^ (e & (f ^ g))
    let t1 = h &+ sigma1 &+ choose &+ constantPlusWord
    let sigma0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
    let majority = (a & b) | (c & (a | b))
    d = d &+ t1
    h = t1 &+ sigma0 &+ majority
  }

  /// Compresses the 64-byte block at `block` into `state`. All sums are
  /// modulo 2^32 (`&+`), as the standard defines them.
  @inline(__always)
  private static func compress(
    _ state: inout State, _ block: UnsafeRawPointer,
    _ w: UnsafeMutablePointer<UInt32>, _ k: UnsafePointer<UInt32>
  ) {
    for index in 0..<16 {
      w[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self))
    }
    for index in 16..<64 {
      let early = w[index &- 15]
      let late = w[index &- 2]
      let s0 = rotate(early, 7) ^ rotate(early, 18) ^ (early &>> 3)
      let s1 = rotate(late, 17) ^ rotate(late, 19) ^ (late &>> 10)
      w[index] = w[index &- 16] &+ s0 &+ w[index &- 7] &+ s1
    }
    var (a, b, c, d, e, f, g, h) = (state.a, state.b, state.c, state.d, state.e, state.f, state.g, state.h)
    var index = 0
    while index < 64 {
      round(a, b, c, &d, e, f, g, &h, k[index] &+ w[index])
      round(h, a, b, &c, d, e, f, &g, k[index &+ 1] &+ w[index &+ 1])
      round(g, h, a, &b, c, d, e, &f, k[index &+ 2] &+ w[index &+ 2])
      round(f, g, h, &a, b, c, d, &e, k[index &+ 3] &+ w[index &+ 3])
      round(e, f, g, &h, a, b, c, &d, k[index &+ 4] &+ w[index &+ 4])
      round(d, e, f, &g, h, a, b, &c, k[index &+ 5] &+ w[index &+ 5])
      round(c, d, e, &f, g, h, a, &b, k[index &+ 6] &+ w[index &+ 6])
      round(b, c, d, &e, f, g, h, &a, k[index &+ 7] &+ w[index &+ 7])
      index &+= 8
    }
    state.a &+= a
    state.b &+= b
    state.c &+= c
    state.d &+= d
    state.e &+= e
    state.f &+= f
    state.g &+= g
    state.h &+= h
  }
}
