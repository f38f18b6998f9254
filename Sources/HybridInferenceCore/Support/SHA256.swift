internal import CHybridOS
import Foundation

/// SHA-256 (FIPS 180-4), fed as the bytes arrive, so that a file is verified
/// while it is written rather than read back in a second pass.
///
/// Two implementations give the same digests. Where the process already has
/// OpenSSL's libcrypto (on Linux, FoundationNetworking loads libcurl, which
/// loads it) the hash calls it, found by name at run time: it uses the CPU's
/// SHA instructions, several times faster than Swift, which is what lets a
/// download hash keep up with the network. The library does not link
/// libcrypto (every app would gain a system dependency), so where it is absent
/// (libcurl on GnuTLS, musl, Darwin) the hash runs in Swift. The choice is made
/// once per process (`preferred`).
///
/// A value: a copy goes on independently of the original (the OpenSSL state
/// is copied before a shared one is changed), and `finalize()` leaves the
/// hash usable, so it can take more bytes after a digest.
///
/// ```swift
/// var hash = SHA256()
/// hash.update(firstChunk)
/// hash.update(secondChunk)
/// let expected = hash.hexDigest  // 64 lowercase hexadecimal digits
/// ```
package struct SHA256: Sendable {
  /// Where the rounds run.
  package enum Implementation: Sendable, Equatable {
    /// OpenSSL's EVP digest API, in the libcrypto the process has loaded.
    case openSSL
    /// The Swift implementation, on any platform.
    case portable
  }

  /// `.openSSL` when the process has OpenSSL's digest functions, `.portable`
  /// otherwise: looked up once, since the loaded libraries of a process do
  /// not lose them.
  package static let preferred: Implementation = CHybridOS_sha256_available() == 1 ? .openSSL : .portable

  /// The state, by implementation.
  private enum Engine: Sendable {
    case portable(PortableSHA256)
    case openSSL(OpenSSLDigestContext)
    /// OpenSSL failed after bytes went into it (out of memory): the digest
    /// of what was given is lost, and no other implementation has the bytes.
    /// `update` also leaves it here while it holds the state, so that the
    /// state has one owner and is changed in place.
    case failed
  }

  private var engine: Engine

  /// An empty hash: `finalize()` on it gives the digest of no bytes.
  /// `implementation` falls back to `.portable` when OpenSSL is absent or
  /// fails to start a context, so that `.openSSL` is only a preference;
  /// tests pass `.portable` to check the Swift code in a process that has
  /// OpenSSL.
  package init(implementation: Implementation = SHA256.preferred) {
    if implementation == .openSSL, let context = OpenSSLDigestContext() {
      engine = .openSSL(context)
    } else {
      engine = .portable(PortableSHA256())
    }
  }

  /// The implementation this hash runs: `.portable` where `.openSSL` was
  /// asked for but not available.
  package var implementation: Implementation {
    switch engine {
    case .portable: .portable
    case .openSSL, .failed: .openSSL
    }
  }

  /// Hashes `bytes` after those given before.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard bytes.count > 0 else { return }
    switch engine {
    case .portable(var state):
      // `engine` lets go of the state first, so that it is changed in place.
      engine = .failed
      state.update(bytes)
      engine = .portable(state)
    case .openSSL(var context):
      // Drops this value's own reference, so that `context` is the only one
      // unless a copy of the hash holds the context too; then it is copied,
      // and the copy goes on unchanged.
      engine = .failed
      if !isKnownUniquelyReferenced(&context) {
        guard let own = context.copy() else { return }
        context = own
      }
      if context.update(bytes) {
        engine = .openSSL(context)
      }
    case .failed:
      return
    }
  }

  /// Hashes the bytes of `data` after those given before.
  package mutating func update(_ data: Data) {
    data.withUnsafeBytes { update($0) }
  }

  /// Hashes `bytes` after those given before.
  package mutating func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// The 32-byte digest of everything given so far. It works on a copy, so
  /// the value can go on taking bytes after it. Empty when OpenSSL failed
  /// (out of memory) while hashing: no expected digest equals it, so a check
  /// against one fails rather than passes.
  package func finalize() -> [UInt8] {
    switch engine {
    case .portable(let state): state.finalize()
    case .openSSL(let context): context.digest() ?? []
    case .failed: []
    }
  }

  /// `finalize()` as 64 lowercase hexadecimal digits, the form `sha256sum`
  /// prints and the hub's `X-Linked-Etag` carries (empty where `finalize()`
  /// is).
  package var hexDigest: String { SHA256.hex(of: finalize()) }

  /// `bytes` as lowercase hexadecimal digits, two a byte.
  package static func hex(of bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text = [UInt8]()
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
