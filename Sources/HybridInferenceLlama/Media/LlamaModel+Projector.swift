import Foundation
import HybridInferenceCore

/// A projector held weakly by the model it was loaded for: the projector
/// holds its model (libmtmd keeps the model's pointer), so the model must
/// not hold it back.
final class WeakProjector: Sendable {
  // Written once, in init (`weak` requires `var`), and read only under the
  // model's `projectors` lock; weak loads themselves are atomic in Swift.
  nonisolated(unsafe) weak var projector: Projector?
  init(_ projector: Projector) { self.projector = projector }
}

extension LlamaModel {
  /// The projector at `path` for this model: the one already loaded, while
  /// any model value holds it, else loaded now on the calling thread (a
  /// file read: not on the cooperative pool).
  ///
  /// Once per model and path: the load runs under the model's `projectors`
  /// lock, so two model values asking at once load it once. It is freed with
  /// the last model value that holds it, before the model it holds.
  func projector(at path: String, threads: Int) throws(HybridInferenceError) -> Projector {
    let key = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    let loaded = projectors.withLock { projectors in
      Result { () throws(HybridInferenceError) -> Projector in
        if let projector = projectors[key]?.projector { return projector }
        // Encoding goes to the GPU where the model's layers went.
        let projector = try Projector(path: path, model: self, threads: threads, useGPU: offload.isOffloaded)
        projectors[key] = WeakProjector(projector)
        return projector
      }
    }
    return try loaded.get()
  }
}
