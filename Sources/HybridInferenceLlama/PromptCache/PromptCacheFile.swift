import CLlama
import HybridInferenceCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One saved sequence state: its name in the directory, and its bytes.
///
/// A file is a 64-byte header, the tokens (little-endian `Int32`s), then the
/// state (`SequenceStateLayout`'s kept form). The header, little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `HIKVSEQ` and a zero byte |
/// | 8 | 4 | format version (1) |
/// | 12 | 4 | flags: bit 0, the prefix is a prompt's shareable opening |
/// | 16 | 8 | the key's hash (`PromptCacheKey`) |
/// | 24 | 8 | token count |
/// | 32 | 8 | state length in bytes |
/// | 40 | 8 | checksum of the tokens (`Checksum64`) |
/// | 48 | 8 | checksum of the state |
/// | 56 | 8 | checksum of bytes 0..<56 |
///
/// Everything is checked before llama.cpp reads a byte, and each part before
/// the next is read into memory: the file is a regular file of this user's,
/// no larger than the cache may hold (`PrivateFile.openOwn`); the header's
/// checksum, magic, version and key, and the size it implies against the
/// file's; the tokens against their checksum and the prompt; the state's
/// cells, then the whole state against its checksum and its layout. So a
/// file costs memory only as far as it checks, and never more than the
/// cache's `maximumBytes`.
struct PromptCacheFile: Sendable, Equatable {
  static let version: UInt32 = 1
  static let headerSize = 64
  private static let magic: [UInt8] = Array("HIKVSEQ".utf8) + [0]

  /// Why a file was not used: one line for the log.
  struct Rejection: Error {
    var reason: String
  }

  let key: UInt64
  /// Checksum of the tokens: the file's name carries it, for the index.
  let tokensChecksum: UInt64
  let tokenCount: Int
  /// The prefix is the shareable opening of a prompt (instructions, tools),
  /// kept when a conversation that starts with it is saved.
  let isShareable: Bool

  /// `<key>-<tokens checksum>-<count><c|s>.kv`, hex for the checksums.
  var name: String {
    "\(Self.hex(key))-\(Self.hex(tokensChecksum))-\(tokenCount)\(isShareable ? "s" : "c").kv"
  }

  init(key: UInt64, tokens: some Collection<llama_token>, isShareable: Bool) {
    self.key = key
    self.tokensChecksum = Checksum64.of(Array(tokens))
    self.tokenCount = tokens.count
    self.isShareable = isShareable
  }

  /// The entry a file name describes; nil for a name the cache did not write.
  init?(name: String) {
    guard name.hasSuffix(".kv") else { return nil }
    let parts = name.dropLast(3).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 16, parts[1].count == 16, let kind = parts[2].last,
      kind == "c" || kind == "s", let key = UInt64(parts[0], radix: 16), let checksum = UInt64(parts[1], radix: 16),
      let count = Int(parts[2].dropLast()), count > 0, String(count) == parts[2].dropLast()
    else { return nil }
    self.key = key
    self.tokensChecksum = checksum
    self.tokenCount = count
    self.isShareable = kind == "s"
  }

  private static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  /// Whether this file holds a state for the first `tokenCount` tokens of `tokens` (by checksum).
  func isPrefix(of tokens: [llama_token]) -> Bool {
    tokenCount <= tokens.count && Checksum64.of(tokens.prefix(tokenCount)) == tokensChecksum
  }

  // MARK: Writing

  /// The header of a file holding `tokens` and `state`.
  func header(state: [UInt8]) -> [UInt8] {
    var bytes = Self.magic
    func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    append(Self.version)
    append(UInt32(isShareable ? 1 : 0))
    append(key)
    append(UInt64(tokenCount))
    append(UInt64(state.count))
    append(tokensChecksum)
    append(Checksum64.of(state))
    append(Checksum64.of(bytes))
    return bytes
  }

  // MARK: Reading

  /// The state this file holds for `prompt`, read through `descriptor` (a
  /// regular file of this user's of `size` bytes, which the cache bounded)
  /// and checked; throws why not. Read in three steps, each only once the
  /// one before checks: the header (its checksum, and the sizes it declares
  /// against `size`), the tokens (against their checksum and the prompt),
  /// then the state, whose cells are checked before its layers are read. A
  /// file is never read further than its header says, nor its header
  /// believed past the file's real size.
  func readState(
    descriptor: Int32, size: Int, prompt: [llama_token], tag: [UInt8]
  ) throws(Rejection) -> [UInt8] {
    guard size >= Self.headerSize else { throw Rejection(reason: "is truncated (\(size) bytes)") }
    guard let header = PrivateFile.read(descriptor, at: 0, count: Self.headerSize) else {
      throw Rejection(reason: "could not be read")
    }
    func field(_ offset: Int) -> UInt64 {
      header.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
    guard header.prefix(8).elementsEqual(Self.magic) else { throw Rejection(reason: "is not a prompt cache file") }
    guard Checksum64.of(header.prefix(56)) == field(56) else { throw Rejection(reason: "has a damaged header") }
    guard UInt32(truncatingIfNeeded: field(8)) == Self.version else {
      throw Rejection(reason: "has format version \(UInt32(truncatingIfNeeded: field(8))), not \(Self.version)")
    }
    guard field(16) == key else { throw Rejection(reason: "was made for another model, llama.cpp build or KV setting") }
    guard field(24) == UInt64(tokenCount), tokenCount <= prompt.count, field(40) == tokensChecksum,
      (field(12) & 1 == 1) == isShareable
    else { throw Rejection(reason: "does not match its name") }
    let tokenBytes = tokenCount * MemoryLayout<llama_token>.size  // tokenCount <= prompt.count: no overflow
    let stateStart = Self.headerSize + tokenBytes
    guard field(32) <= UInt64(size), stateStart + Int(field(32)) == size else {
      throw Rejection(reason: "is truncated or too long (\(size) bytes, its header says \(field(32)) of state)")
    }
    guard let tokenData = PrivateFile.read(descriptor, at: Self.headerSize, count: tokenBytes) else {
      throw Rejection(reason: "could not be read")
    }
    let tokens = tokenData.withUnsafeBytes { raw in
      (0..<tokenCount).map {
        llama_token(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: llama_token.self))
      }
    }
    guard Checksum64.of(tokens) == tokensChecksum else { throw Rejection(reason: "has damaged tokens") }
    guard tokens.elementsEqual(prompt.prefix(tokenCount)) else {
      throw Rejection(reason: "holds another prompt's tokens")
    }
    // The cells (a few bytes a token) before the layers (kilobytes a token).
    let cellsEnd = SequenceStateLayout.tagSize + 4 + tokenCount * SequenceStateLayout.cellSize
    guard size - stateStart > cellsEnd,
      let cells = PrivateFile.read(descriptor, at: stateStart, count: cellsEnd + 1),
      SequenceStateLayout.isValid(cells, tokens: tokenCount, tag: tag)
    else { throw Rejection(reason: "holds a state llama.cpp did not write for this context") }
    guard let state = PrivateFile.read(descriptor, at: stateStart, count: size - stateStart) else {
      throw Rejection(reason: "could not be read")
    }
    guard Checksum64.of(state) == field(48) else { throw Rejection(reason: "has a damaged state") }
    guard SequenceStateLayout.isValid(state, tokens: tokenCount, tag: tag) else {
      throw Rejection(reason: "holds a state llama.cpp did not write for this context")
    }
    return state
  }
}
