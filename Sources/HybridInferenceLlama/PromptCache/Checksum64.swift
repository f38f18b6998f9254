/// XXH64 (Yann Collet's 64-bit xxHash, seed 0): the prompt cache's checksum
/// of a file's header, tokens and state, and the hash of a token prefix in a
/// file's name.
///
/// Why this one: a cache file of 1,100 SmolLM2 tokens holds ~25 MB of KV
/// state, read on the llama thread before a turn starts; XXH64 checks it at
/// memory speed (eight bytes a multiply), where a byte-at-a-time CRC32 or FNV
/// would cost tens of milliseconds. It catches damage (a torn write, a
/// truncated copy, flipped bits), not forgery: anyone who can write the cache
/// directory can write a valid checksum, which is why the state's layout is
/// also checked (`SequenceStateLayout`) before llama.cpp reads it.
enum Checksum64 {
  private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
  private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
  private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
  private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
  private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

  /// The checksum of `bytes`.
  static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    let count = bytes.count
    var offset = 0
    var hash: UInt64
    func word(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    if count >= 32 {
      var lanes: (UInt64, UInt64, UInt64, UInt64) = (prime1 &+ prime2, prime2, 0, 0 &- prime1)
      while offset + 32 <= count {
        lanes.0 = round(lanes.0, word(offset))
        lanes.1 = round(lanes.1, word(offset + 8))
        lanes.2 = round(lanes.2, word(offset + 16))
        lanes.3 = round(lanes.3, word(offset + 24))
        offset += 32
      }
      hash = rotate(lanes.0, 1) &+ rotate(lanes.1, 7) &+ rotate(lanes.2, 12) &+ rotate(lanes.3, 18)
      for lane in [lanes.0, lanes.1, lanes.2, lanes.3] {
        hash = (hash ^ round(0, lane)) &* prime1 &+ prime4
      }
    } else {
      hash = prime5
    }
    hash &+= UInt64(count)
    while offset + 8 <= count {
      hash = rotate(hash ^ round(0, word(offset)), 27) &* prime1 &+ prime4
      offset += 8
    }
    if offset + 4 <= count {
      let half = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
      hash = rotate(hash ^ (half &* prime1), 23) &* prime2 &+ prime3
      offset += 4
    }
    while offset < count {
      hash = rotate(hash ^ (UInt64(bytes[offset]) &* prime5), 11) &* prime1
      offset += 1
    }
    hash ^= hash >> 33
    hash &*= prime2
    hash ^= hash >> 29
    hash &*= prime3
    hash ^= hash >> 32
    return hash
  }

  /// The checksum of `values`' bytes, as they are in memory.
  static func of<C: Collection>(_ values: C) -> UInt64 {
    values.withContiguousStorageIfAvailable { of(UnsafeRawBufferPointer($0)) } ?? Array(values).withUnsafeBytes(of)
  }

  private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
    rotate(accumulator &+ input &* prime2, 31) &* prime1
  }

  private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
    (value << bits) | (value >> (64 - bits))
  }
}
