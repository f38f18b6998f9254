import Dispatch
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Loads each model file once and shares it among every session that uses it.
///
/// Process-wide, like llama.cpp's own backend: two `LocalSystemModel` values
/// for the same file must not load it twice. Models are held weakly, so a file
/// no model value uses any more is freed. A file is its path and the identity
/// of the bytes that were checked (`FileIdentity`): a newer file renamed over
/// the path is another model.
///
/// Every waiter of a load settles its entry when the load ends, but only
/// while the entry still is that load's (`settle`): a waiter of a failed load
/// that resumes after a newer load began must leave the newer one in place,
/// or the next caller would start a third load of the same file beside it.
final class LlamaModelStore: Sendable {
  static let shared = LlamaModelStore()

  typealias Loader =
    @Sendable (String, GGUFFile, LlamaModel.LoadOptions, (@Sendable (Double) -> Void)?) async throws -> LlamaModel

  /// One model file: its resolved path and the identity that was checked,
  /// whether its weights are read in or mapped (`MemoryPlan`), and the GPU
  /// offload asked for (`GPUOffload`): each is a different load. The offload
  /// asked for, not what it came to: that depends on the GPU's free memory
  /// at the time, which the first load of the file itself takes.
  struct Key: Hashable {
    var path: String
    var identity: FileIdentity
    var weightsInMemory = false
    var gpu = GPUOffload.automatic
  }

  private enum Entry {
    case loading(Task<LlamaModel, any Error>)
    case loaded(WeakModel)
  }

  private final class WeakModel: Sendable {
    // Written once, in init (`weak` requires `var`), and read only under the
    // store's lock; weak loads themselves are atomic in Swift.
    nonisolated(unsafe) weak var model: LlamaModel?
    init(_ model: LlamaModel) { self.model = model }
  }

  private let entries = Locked<[Key: Entry]>([:])
  private let load: Loader

  /// A store that loads with `load` (tests count and fail loads with it).
  init(load: @escaping Loader = LlamaModelStore.loadOffTheCooperativePool) {
    self.load = load
  }

  /// The loaded model for `file`, loading it on a background thread if needed.
  func model(
    at path: String, file: GGUFFile, load options: LlamaModel.LoadOptions = .init(),
    progress: (@Sendable (Double) -> Void)?
  ) async throws -> LlamaModel {
    let key = Key(
      path: URL(fileURLWithPath: path).resolvingSymlinksInPath().path, identity: file.identity,
      weightsInMemory: options.weightsInMemory, gpu: options.gpu)
    let task = task(for: key, path: path, file: file, load: options, progress: progress)
    let result = await task.result
    settle(key, task, result)
    return try result.get()
  }

  /// The load of `key`: the model already loaded, the load under way, or a new one.
  func task(
    for key: Key, path: String, file: GGUFFile, load options: LlamaModel.LoadOptions = .init(),
    progress: (@Sendable (Double) -> Void)?
  ) -> Task<LlamaModel, any Error> {
    entries.withLock { entries -> Task<LlamaModel, any Error> in
      switch entries[key] {
      case .loaded(let weak):
        if let model = weak.model { return Task { model } }
      case .loading(let task):
        return task
      case nil:
        break
      }
      let load = self.load
      let task = Task<LlamaModel, any Error> { try await load(path, file, options, progress) }
      entries[key] = .loading(task)
      return task
    }
  }

  /// Records how `task` ended: the loaded model, or no entry after a
  /// failure (the next caller tries again). Only while `key`'s entry still is
  /// `task`'s load; another waiter may have settled it already, and a newer
  /// load may have replaced it since.
  func settle(_ key: Key, _ task: Task<LlamaModel, any Error>, _ result: Result<LlamaModel, any Error>) {
    entries.withLock { entries in
      guard case .loading(let current) = entries[key], current == task else { return }
      switch result {
      case .success(let model): entries[key] = .loaded(WeakModel(model))
      case .failure: entries[key] = nil
      }
    }
  }

  /// Loading reads the whole file: keep it off Swift's few cooperative threads.
  @Sendable
  static func loadOffTheCooperativePool(
    path: String, file: GGUFFile, options: LlamaModel.LoadOptions, progress: (@Sendable (Double) -> Void)?
  ) async throws -> LlamaModel {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async {
        continuation.resume(
          with: Result { () throws(HybridInferenceError) in
            try LlamaModel(path: path, file: file, options: options, progress: progress)
          })
      }
    }
  }
}
