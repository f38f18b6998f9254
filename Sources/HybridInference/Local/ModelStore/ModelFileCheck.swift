import Foundation

/// Remembers the verdict on a model file until the file changes, so asking for
/// availability costs one `stat` rather than a read of the header.
final class ModelFileCheck: Sendable {
  private struct Verdict {
    var size: Int
    var modified: Date
    var result: Result<GGUFFile, HybridInferenceError>
  }

  let path: String
  private let cached = Locked<Verdict?>(nil)

  init(path: String) {
    self.path = path
  }

  /// The parsed header, or why the file is not usable.
  func check() -> Result<GGUFFile, HybridInferenceError> {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
    let modified = attributes?[.modificationDate] as? Date ?? .distantPast
    if let verdict = cached.withLock({ $0 }), verdict.size == size, verdict.modified == modified {
      return verdict.result
    }
    let result = Result { () throws(HybridInferenceError) in try GGUFFile.read(path: path) }
    cached.withLock { $0 = Verdict(size: size, modified: modified, result: result) }
    return result
  }
}
