import Dispatch
import Foundation

/// Loads each model file once and shares it among every session that uses it.
///
/// Process-wide, like llama.cpp's own backend: two `LocalSystemModel` values
/// for the same file must not load it twice. Models are held weakly, so a file
/// no model value uses any more is freed.
final class LlamaModelStore: Sendable {
  static let shared = LlamaModelStore()

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

  private let entries = Locked<[String: Entry]>([:])

  /// The loaded model for `file`, loading it on a background thread if needed.
  func model(
    at path: String, file: GGUFFile, progress: (@Sendable (Double) -> Void)?
  ) async throws -> LlamaModel {
    let key = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    let task = entries.withLock { entries -> Task<LlamaModel, any Error> in
      switch entries[key] {
      case .loaded(let weak):
        if let model = weak.model { return Task { model } }
      case .loading(let task):
        return task
      case nil:
        break
      }
      let task = Task<LlamaModel, any Error> {
        try await Self.loadOffTheCooperativePool(path: path, file: file, progress: progress)
      }
      entries[key] = .loading(task)
      return task
    }
    do {
      let model = try await task.value
      entries.withLock { $0[key] = .loaded(WeakModel(model)) }
      return model
    } catch {
      entries.withLock { entries in
        if case .loading = entries[key] { entries[key] = nil }
      }
      throw error
    }
  }

  /// Loading reads the whole file: keep it off Swift's few cooperative threads.
  private static func loadOffTheCooperativePool(
    path: String, file: GGUFFile, progress: (@Sendable (Double) -> Void)?
  ) async throws -> LlamaModel {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async {
        continuation.resume(
          with: Result { () throws(HybridInferenceError) in
            try LlamaModel(path: path, file: file, progress: progress)
          })
      }
    }
  }
}
