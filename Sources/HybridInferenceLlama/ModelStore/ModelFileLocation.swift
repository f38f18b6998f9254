import HybridInferenceCore
import HybridInferenceDownload

/// Where a `LocalSystemModel`'s file is: a path the app gave, or the place
/// a `ModelSource`'s download puts it, found anew at each look (a `stat`
/// and, for a hub file, one small `refs` read), so that a model becomes
/// available the moment its download has moved the file into place, in
/// this process or another.
///
/// Shared by every copy of the model value, with the verdict on the file
/// (`ModelFileCheck`) kept until the path or the file changes.
final class ModelFileLocation: Sendable {
  /// The source's download; nil for a model given by path.
  let download: ModelDownload?
  /// The projector's download, when the model has one.
  let projector: ModelDownload?
  private let fixedPath: String?
  private let fixedProjectorPath: String?
  /// The check of the file last found. Locked: copies of the model value
  /// on several tasks ask for availability at once.
  private let lastCheck = Locked<ModelFileCheck?>(nil)

  init(path: String, projectorPath: String? = nil) {
    fixedPath = path
    fixedProjectorPath = projectorPath
    download = nil
    projector = nil
  }

  init(download: ModelDownload, projector: ModelDownload? = nil) {
    fixedPath = nil
    fixedProjectorPath = nil
    self.download = download
    self.projector = projector
  }

  /// The file's path when it is on disk (always the given one for a path);
  /// nil while a source's projector is not on disk either, since the model
  /// is not ready without it.
  var path: String? {
    if let fixedPath { return fixedPath }
    if projector != nil, projectorPath == nil { return nil }
    return try? download?.localPath()
  }

  /// The projector's path: the one given with a path, or where the
  /// projector's download put it, once it is on disk.
  var projectorPath: String? { fixedProjectorPath ?? (try? projector?.localPath()) }

  /// Whether the model has a projector, on disk or not yet.
  var hasProjector: Bool { fixedProjectorPath != nil || projector != nil }

  /// The parsed header of the file now on disk, or why it is not usable:
  /// `.unavailable(modelNotReady)` while a source's file is not there yet.
  func check() -> Result<GGUFFile, HybridInferenceError> {
    guard let path else {
      return .failure(.unavailable(model: LocalSystemModel.modelVersion, reason: .modelNotReady))
    }
    let check = lastCheck.withLock { last in
      if let last, last.path == path { return last }
      let made = ModelFileCheck(path: path)
      last = made
      return made
    }
    return check.check()
  }
}
