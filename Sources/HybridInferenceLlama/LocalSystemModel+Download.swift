import Foundation
import HybridInferenceCore
import HybridInferenceDownload

extension LocalSystemModel {
  /// A model the library fetches itself: nothing is read or sent until
  /// `download()` is called. Until the file is on disk, verified, the
  /// model's availability is `.unavailable(.modelNotReady)`, so a
  /// prefer-on-device hybrid answers from the cloud meanwhile; once the
  /// download has finished, the same value (and every copy of it) answers
  /// on device. A file already in the store (or, for a hub file, in the hub
  /// cache, put there by huggingface_hub or llama.cpp) is used as it is.
  ///
  /// ```swift
  /// let fetched = LocalSystemModel(
  ///   source: .huggingFace(repository: "HuggingFaceTB/SmolLM2-360M-Instruct-GGUF",
  ///                        file: "smollm2-360m-instruct-q8_0.gguf"))
  /// for try await progress in fetched.download() { print(progress.fractionCompleted) }
  /// ```
  ///
  /// `projector` is a multimodal projector's file (an `mmproj` GGUF) fetched
  /// with the model: `download()` brings both, and the model is not ready
  /// until both are on disk. The other parameters are those of
  /// `init(modelPath:...)`.
  public init(
    source: ModelSource, projector: ModelSource? = nil, store: ModelStore = .default, contextSize: Int? = nil,
    threads: Int? = nil,
    batchSize: Int = 512, parallelRequests: Int = 4, isEnabled: Bool = true, allowsGenericToolFormat: Bool = true,
    promptCache: PromptCache? = nil, flashAttention: FlashAttention = .automatic, memory: ModelMemory = .automatic,
    gpu: GPUOffload = .automatic
  ) {
    let download = ModelDownload(source: source, store: store) { path in _ = try GGUFFile.read(path: path) }
    let projectorDownload = projector.map { ModelDownload(source: $0, store: store, check: Self.checkProjector) }
    self.init(
      location: ModelFileLocation(download: download, projector: projectorDownload), contextSize: contextSize,
      threads: threads,
      batchSize: batchSize, parallelRequests: parallelRequests, isEnabled: isEnabled,
      allowsGenericToolFormat: allowsGenericToolFormat, promptCache: promptCache, flashAttention: flashAttention,
      memory: memory, gpu: gpu)
  }

  /// Fetches the model's file: resumes what an earlier download left,
  /// checks the SHA-256 and the GGUF content, and moves the file into place
  /// in one rename. Yields the bytes on disk a few times a second, never
  /// going down, and once at the end; on a model already on disk (or one
  /// given by path) it yields that one final progress. With a projector,
  /// the projector follows the model and the progress counts both: its
  /// total grows by the projector's size once that is known.
  ///
  /// Stopping early (cancelling the task that iterates, or breaking out of
  /// the loop) keeps the partial file: the next call resumes it. Two
  /// processes (or two tasks) downloading one file fetch it once: the second
  /// waits for the first and finds the file. Errors:
  /// `HybridInferenceError.downloadFailed`, `.checksumMismatch`,
  /// `.insufficientDiskSpace`, `.invalidModelSource`, `.invalidModelFile`,
  /// `.redirectRefused`; a model given by path whose file is missing,
  /// `.unavailable(model:reason: .modelNotReady)`.
  public func download() -> AsyncThrowingStream<DownloadProgress, any Error> {
    let location = self.location
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          if let download = location.download {
            if let path = location.path {
              let size = ModelDownload.fileSize(path) + (location.projectorPath.map(ModelDownload.fileSize) ?? 0)
              continuation.yield(DownloadProgress(completedBytes: size, totalBytes: size))
            } else {
              try await Self.fetch(download, then: location.projector, into: continuation)
            }
          } else {
            // A file that is not there is not ready; one that is there but unusable says why.
            guard let path = location.path, FileManager.default.fileExists(atPath: path) else {
              throw HybridInferenceError.unavailable(model: LocalSystemModel.modelVersion, reason: .modelNotReady)
            }
            let file = try location.check().get()
            let size = Int64(file.fileSize)
            continuation.yield(DownloadProgress(completedBytes: size, totalBytes: size))
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// Runs the model's download, then the projector's, reporting both as one
  /// count of bytes.
  private static func fetch(
    _ model: ModelDownload, then projector: ModelDownload?,
    into continuation: AsyncThrowingStream<DownloadProgress, any Error>.Continuation
  ) async throws {
    let modelPath = try await model.run { continuation.yield($0) }
    guard let projector else { return }
    let modelSize = ModelDownload.fileSize(modelPath)
    _ = try await projector.run { progress in
      continuation.yield(
        DownloadProgress(
          completedBytes: modelSize + progress.completedBytes, totalBytes: progress.totalBytes.map { modelSize + $0 }))
    }
  }

  /// A projector is a GGUF file; what it holds is libmtmd's to check when it loads.
  @Sendable private static func checkProjector(_ path: String) throws {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    guard try handle.read(upToCount: 4) == Data("GGUF".utf8) else {
      throw HybridInferenceError.invalidModelFile(path: path, reason: "the projector is not a GGUF file")
    }
  }
}
