import CHybridMTMD
import Foundation
import HybridInferenceCore
import Synchronization

/// A multimodal projector (an `mmproj` GGUF) loaded by libmtmd for one
/// loaded model: what turns an image or a sound into embeddings the model
/// reads in place of tokens.
///
/// It holds its model: libmtmd keeps the model's pointer and vocabulary, so
/// the model must outlive it. Reading its capabilities is safe from any
/// thread; encoding and decoding (libmtmd's `mtmd_helper_eval_chunk_single`) is
/// not, and belongs to whoever holds the llama.cpp context.
///
/// `@unchecked Sendable`: nothing here changes after `init` (but `encodedImages`, an atomic), and libmtmd's
/// context is only read by the members below (its capability queries,
/// `mtmd_tokenize` and the helper's decoding are thread-safe by its
/// header's word), but for encoding, which `evaluate` does under `encoding`.
final class Projector: @unchecked Sendable {
  /// The projector's file.
  let path: String
  /// The model it was loaded for.
  let model: LlamaModel
  /// The libmtmd that loaded it.
  let library: MTMDLibrary
  /// libmtmd's context (`mtmd_context *`).
  let context: OpaquePointer
  /// Whether it reads images.
  let supportsVision: Bool
  /// Whether it reads sound.
  let supportsAudio: Bool
  /// The text that stands for one image or sound in a prompt given to libmtmd.
  let marker: String
  /// Whether the model decodes image tokens without a causal mask (Gemma 3).
  let decodesMediaNonCausally: Bool
  /// Whether the model places image tokens with M-RoPE (Qwen2-VL): then a
  /// chunk takes fewer positions in the context than it has tokens.
  let usesMRoPE: Bool
  /// Held by `evaluate` for its whole call: libmtmd's encoder keeps its
  /// graph and output embeddings in the context, and one projector is shared
  /// by every model value of its weights, whose contexts' schedulers run on
  /// lanes of their own.
  let encoding = NSLock()
  /// How many images `evaluate` has handed to the encoder: what tells a
  /// test that a later turn kept an image's cells instead.
  let encodedImages = Atomic<Int>(0)

  /// Loads the projector at `path` for `model` on the calling thread.
  ///
  /// - Parameters:
  ///   - library: libmtmd, or why it is not there (``MTMDLibrary/shared``).
  ///   - threads: Threads for encoding images.
  ///   - useGPU: Encode on a GPU backend where llama.cpp has one.
  ///   - warmup: Encode one blank image at load, so that the first request
  ///     does not pay for sizing the encoder's buffers.
  /// - Throws: ``HybridInferenceError/unsupportedRequest(_:)`` when libmtmd
  ///   is not there; ``HybridInferenceError/invalidModelFile(path:reason:)``
  ///   when it will not load the file for this model.
  init(
    path: String, model: LlamaModel, library: Result<MTMDLibrary, HybridInferenceError> = MTMDLibrary.shared,
    threads: Int, useGPU: Bool = true, warmup: Bool = true
  ) throws(HybridInferenceError) {
    let library = try library.get()
    guard FileManager.default.isReadableFile(atPath: path) else {
      throw .invalidModelFile(path: path, reason: "the projector cannot be read")
    }
    // clamp: a thread count from an app, passed as a C int.
    let options = CHybridMTMD_options(
      use_gpu: useGPU, threads: Int32(clamping: max(1, threads)), warmup: warmup, flash_attention: -1,
      progress: { _, _ in !LlamaBackend.inFlight.isStopping }, progress_user_data: nil)
    // Counted as work, so that an exit during the load stops it first.
    LlamaBackend.inFlight.enter()
    let errors = MTMDErrorLines()
    let loaded = MTMDErrorLines.$collecting.withValue(errors) {
      withExtendedLifetime(model) { CHybridMTMD_init(library.table, path, model.pointer, options) }
    }
    LlamaBackend.inFlight.leave()
    guard let loaded else {
      let why = errors.summary ?? "see its log"
      throw .invalidModelFile(
        path: path, reason: "libmtmd could not load it as a projector for \(model.name ?? "this model"): \(why)")
    }
    self.path = path
    self.model = model
    self.library = library
    self.context = loaded
    self.supportsVision = CHybridMTMD_supports_vision(library.table, loaded)
    self.supportsAudio = CHybridMTMD_supports_audio(library.table, loaded)
    self.marker = CHybridMTMD_marker(library.table, loaded).map { String(cString: $0) } ?? library.defaultMarker
    self.decodesMediaNonCausally = CHybridMTMD_decode_non_causal(library.table, loaded)
    self.usesMRoPE = CHybridMTMD_decode_mrope(library.table, loaded)
  }

  deinit {
    CHybridMTMD_free(library.table, context)
  }
}
