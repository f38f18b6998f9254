import Dispatch
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// Images on device: what a model with a projector reads, and how a
/// request's images become the prompt the scheduler prefills.
extension LocalSystemModel {
  /// What the new prompt may hold before the model loads: images when the
  /// model has a projector (whether it reads them is known once it loads),
  /// text only otherwise. The marker is the projector's, known later.
  var mediaBeforeLoad: DeviceMedia.Reading { location.hasProjector ? .images(marker: "") : .textOnly }

  /// The model's projector, loaded for `model` on first use, off Swift's
  /// cooperative pool, and shared with every model value of the same
  /// weights and projector (`LlamaModel.projector(at:threads:)`).
  ///
  /// - Throws: `unsupportedRequest` when the model has no projector (or its
  ///   download is not on disk), when libmtmd is missing, or when the
  ///   projector reads no images or places them with M-RoPE (which this
  ///   library does not prefill); `invalidModelFile` when libmtmd will not
  ///   load it for these weights.
  func loadedProjector(for model: LlamaModel) async throws -> Projector {
    if let projector = handle.projector, projector.model === model { return projector }
    guard let path = location.projectorPath else {
      throw HybridInferenceError.unsupportedRequest("the on-device model has no projector on disk to read images")
    }
    let threads = self.threads
    let projector = try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async {
        continuation.resume(
          with: Result { () throws(HybridInferenceError) in try model.projector(at: path, threads: threads) })
      }
    }
    guard projector.supportsVision else {
      throw HybridInferenceError.unsupportedRequest("the on-device model's projector reads no images")
    }
    guard !projector.usesMRoPE else {
      throw HybridInferenceError.unsupportedRequest(
        "the on-device model places image tokens with M-RoPE, which the library does not prefill yet")
    }
    handle.projector = projector
    return projector
  }

  /// The projector that reads the images of `transcript`, and those images
  /// in order (`DeviceMedia.images(readIn:)`); nil and none when the model
  /// has no projector or the transcript no image it reads. A projector that
  /// does not load fails a request whose new prompt has images; with images
  /// in earlier turns only, they are read as placeholders instead.
  func projector(
    reading transcript: Transcript, model: LlamaModel
  ) async throws -> (Projector?, [Part.Blob]) {
    guard location.hasProjector else { return (nil, []) }
    let images = DeviceMedia.images(readIn: transcript)
    guard !images.isEmpty else { return (nil, []) }
    if DeviceMedia.images(inNewPromptOf: transcript).isEmpty {
      guard let projector = try? await loadedProjector(for: model) else { return (nil, []) }
      return (projector, images)
    }
    return (try await loadedProjector(for: model), images)
  }

  /// The chunks of `prompt` (rendered with `projector`'s marker where each
  /// image stands) and `images`, in order: each image checked and decoded
  /// (`DecodedImage`), the text read whole by libmtmd.
  ///
  /// - Throws: `unsupportedRequest` when the rendered prompt holds another
  ///   number of markers than there are images (a message's own text holds
  ///   the marker, which must not move an image; or the template left a
  ///   message out), or a message holds control tokens
  ///   (`LlamaModel.wholeText(of:)`); the image's own errors.
  static func mediaChunks(
    of prompt: RenderedPrompt, images: [Part.Blob], model: LlamaModel, projector: Projector
  ) throws(HybridInferenceError) -> MediaChunks {
    let markers = prompt.text.components(separatedBy: projector.marker).count - 1
    guard markers == images.count else {
      throw .unsupportedRequest(
        "the prompt with \(images.count) image(s) renders \(markers) image markers (\(projector.marker)): "
          + "a message's text holds the marker, or the template leaves an image out")
    }
    let text = try model.wholeText(of: prompt)
    let decoded = try images.map { image throws(HybridInferenceError) in
      try DecodedImage(image.data, mimeType: image.mimeType, for: projector)
    }
    return try projector.tokenize(text, decoded: decoded, addSpecial: true, parseSpecial: true)
  }
}
