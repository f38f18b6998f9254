import HybridInferenceCore

extension LocalSystemModel {
  /// The number of tokens `prompt` takes (`countTokens(_:)` of its text).
  ///
  /// A model with a projector that reads images counts each image as the
  /// tokens its embeddings take, where it stands (the text, then each image
  /// on a line of its own, as a request reads it); the images are checked
  /// and decoded for that. Any other attachment, or any attachment to a
  /// model without a projector, is `unsupportedRequest`, as a request with
  /// it would be.
  public func countTokens(_ prompt: Prompt) async throws -> Int {
    try prompt.validate()
    guard !prompt.attachments.isEmpty else { return try await countTokens(prompt.text) }
    let transcript = Transcript(entries: [.prompt(prompt)])
    try DeviceMedia.checkNewPrompt(of: transcript, reading: mediaBeforeLoad)
    let model = try await loadedModel(progress: nil)
    let projector = try await loadedProjector(for: model)
    let images = DeviceMedia.images(inNewPromptOf: transcript)
    guard let entry = transcript.entries.first else { return 0 }
    let text = DeviceMedia.text(of: entry, marker: projector.marker, newPrompt: true)
    return try await TemplateThread.run { _ in
      let decoded = try images.map { image throws(HybridInferenceError) in
        try DecodedImage(image.data, mimeType: image.mimeType, for: projector)
      }
      return try projector.tokenize(text, decoded: decoded, addSpecial: true, parseSpecial: true).tokenCount
    }
  }
}
