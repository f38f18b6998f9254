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
  /// The other parameters are those of `init(modelPath:...)`.
  public init(
    source: ModelSource, store: ModelStore = .default, contextSize: Int? = nil, threads: Int? = nil,
    batchSize: Int = 512, parallelRequests: Int = 4, isEnabled: Bool = true, allowsGenericToolFormat: Bool = true,
    promptCache: PromptCache? = nil, flashAttention: FlashAttention = .automatic, memory: ModelMemory = .automatic
  ) {
    let download = ModelDownload(source: source, store: store) { path in _ = try GGUFFile.read(path: path) }
    self.init(
      location: ModelFileLocation(download: download), contextSize: contextSize, threads: threads,
      batchSize: batchSize, parallelRequests: parallelRequests, isEnabled: isEnabled,
      allowsGenericToolFormat: allowsGenericToolFormat, promptCache: promptCache, flashAttention: flashAttention,
      memory: memory)
  }

  /// Fetches the model's file: resumes what an earlier download left,
  /// checks the SHA-256 and the GGUF content, and moves the file into place
  /// in one rename. Yields the bytes on disk a few times a second, never
  /// going down, and once at the end; on a model already on disk (or one
  /// given by path) it yields that one final progress.
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
            _ = try await download.run { continuation.yield($0) }
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
}
