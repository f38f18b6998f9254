internal import CHybridOS

/// One OpenSSL SHA-256 context (an `EVP_MD_CTX` in C memory), freed when the
/// last reference goes: `SHA256`'s storage where the process has OpenSSL.
///
/// `@unchecked Sendable`: OpenSSL changes the context on `update`, with no
/// lock. `SHA256` calls `update` only on a context it alone references
/// (copy-on-write: a shared one is copied first), and does nothing else to
/// a context but read it (`copy()`, `digest()` work on a copy), so a context
/// several threads reach is only read.
final class OpenSSLDigestContext: @unchecked Sendable {
  private let context: OpaquePointer

  /// A context that has hashed nothing; nil when the process has no OpenSSL
  /// or OpenSSL fails to start one.
  init?() {
    guard let context = CHybridOS_sha256_new() else { return nil }
    self.context = context
  }

  private init(owning context: OpaquePointer) {
    self.context = context
  }

  deinit {
    CHybridOS_sha256_free(context)
  }

  /// A context of its own in this one's state; nil when OpenSSL fails to
  /// allocate it.
  func copy() -> OpenSSLDigestContext? {
    CHybridOS_sha256_copy(context).map { OpenSSLDigestContext(owning: $0) }
  }

  /// Hashes `bytes` after those given before; false when OpenSSL refuses,
  /// after which the context's digest is unknown.
  func update(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
    return CHybridOS_sha256_update(context, base, bytes.count) == 1
  }

  /// The 32-byte digest of everything given so far, from a copy, so that this
  /// context goes on taking bytes; nil when OpenSSL fails.
  func digest() -> [UInt8]? {
    guard let finished = CHybridOS_sha256_copy(context) else { return nil }
    defer { CHybridOS_sha256_free(finished) }
    var digest = [UInt8](repeating: 0, count: 32)
    let done = digest.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.map { CHybridOS_sha256_final(finished, $0) == 1 } ?? false
    }
    return done ? digest : nil
  }
}
