import HybridInferenceCore
import HybridInferenceJinja

/// Remembers the verdict on a model file until the file changes, so asking for
/// availability costs one `stat` rather than a read of the header.
///
/// "Changes" is any change of `FileIdentity`: another inode renamed over the
/// path, or a write (size, modification or status-change time).
final class ModelFileCheck: Sendable {
  private struct Verdict {
    var identity: FileIdentity?
    var result: Result<GGUFFile, HybridInferenceError>
  }

  let path: String
  private let cached = Locked<Verdict?>(nil)

  init(path: String) {
    self.path = path
  }

  /// The parsed header, or why the file is not usable.
  func check() -> Result<GGUFFile, HybridInferenceError> {
    let identity = FileIdentity.of(path: path)
    if let verdict = cached.withLock({ $0 }), verdict.identity == identity {
      return verdict.result
    }
    let result = Result { () throws(HybridInferenceError) in try GGUFFile.read(path: path) }
    // Keyed by the file the read saw, which is the one a load will compare.
    let seen = (try? result.get())?.identity ?? identity
    cached.withLock { $0 = Verdict(identity: seen, result: result) }
    return result
  }
}
