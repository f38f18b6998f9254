import CHybridMTMD
import Foundation
import HybridInferenceCore

/// A prompt split by libmtmd into chunks of text tokens and of media (an
/// image's embeddings to come), ready to be evaluated into a context.
///
/// It holds its projector, whose context the chunks refer to. `@unchecked
/// Sendable`: the chunks are only read after `tokenize` made them
/// (`mtmd_helper_get_n_tokens`, `_n_pos` and each chunk's tokens and id
/// read in `init`), and freed once, in `deinit`.
final class MediaChunks: @unchecked Sendable {
  let projector: Projector
  /// libmtmd's list (`mtmd_input_chunks *`).
  let pointer: OpaquePointer
  /// How many chunks: each run of text, and each image, is one.
  let count: Int
  /// The tokens they hold, an image's embeddings counted one a token.
  let tokenCount: Int
  /// The positions they take in the context: `tokenCount`, but for models
  /// that place image tokens in two dimensions (M-RoPE).
  let positionCount: Int
  /// What each position holds, for a later turn to compare.
  let layout: MediaLayout

  fileprivate init(projector: Projector, pointer: OpaquePointer) {
    let table = projector.library.table
    self.projector = projector
    self.pointer = pointer
    self.count = CHybridMTMD_chunks_count(table, pointer)
    self.tokenCount = CHybridMTMD_chunks_tokens(table, pointer)
    self.positionCount = Int(CHybridMTMD_chunks_positions(table, pointer))
    self.layout = MediaLayout(chunks: pointer, count: count, table: table)
  }

  deinit {
    CHybridMTMD_chunks_free(projector.library.table, pointer)
  }
}

extension Projector {
  /// `text` with each ``marker`` standing for the next of `images`, as
  /// libmtmd's chunks: the text tokenized (with `addSpecial`, the model's
  /// BOS first where its vocabulary asks for one; with `parseSpecial`, marker
  /// text such as `<|im_start|>` becomes control tokens), each image resized
  /// and cut up for the encoder, though not yet encoded.
  ///
  /// - Throws: ``HybridInferenceError/unsupportedRequest(_:)`` when the
  ///   markers and the images differ in number, or libmtmd cannot prepare the
  ///   prompt (an image it will not resize, text it will not tokenize);
  ///   ``HybridInferenceError/generationFailed(_:)`` when it cannot allocate.
  func tokenize(
    _ text: String, images: [RGBImage], addSpecial: Bool = false, parseSpecial: Bool = true
  ) throws(HybridInferenceError) -> MediaChunks {
    // Counted here, as libmtmd splits (non-overlapping, left to right): its
    // own count mismatch comes back as any other failure.
    let markers = text.components(separatedBy: marker).count - 1
    guard markers == images.count else {
      throw .unsupportedRequest("the prompt has \(markers) media markers for \(images.count) images")
    }
    let table = library.table
    var bitmaps: [OpaquePointer?] = []
    defer { bitmaps.forEach { CHybridMTMD_bitmap_free(table, $0) } }
    for image in images {
      // Dimensions checked by RGBImage: 1...2^14 each, so UInt32 holds them.
      let bitmap = image.pixels.withUnsafeBufferPointer {
        CHybridMTMD_bitmap_rgb(table, UInt32(image.width), UInt32(image.height), $0.baseAddress, nil)
      }
      guard let bitmap else { throw .generationFailed("libmtmd could not hold an image") }
      bitmaps.append(bitmap)
    }
    return try tokenize(text, bitmaps: bitmaps, addSpecial: addSpecial, parseSpecial: parseSpecial)
  }

  /// `text` with each ``marker`` standing for the next of `images`, decoded
  /// by libmtmd already (`DecodedImage`); otherwise as
  /// ``tokenize(_:images:addSpecial:parseSpecial:)``.
  func tokenize(
    _ text: String, decoded images: [DecodedImage], addSpecial: Bool = false, parseSpecial: Bool = true
  ) throws(HybridInferenceError) -> MediaChunks {
    let markers = text.components(separatedBy: marker).count - 1
    guard markers == images.count else {
      throw .unsupportedRequest("the prompt has \(markers) media markers for \(images.count) images")
    }
    return try withExtendedLifetime(images) { () throws(HybridInferenceError) -> MediaChunks in
      try tokenize(text, bitmaps: images.map(\.bitmap), addSpecial: addSpecial, parseSpecial: parseSpecial)
    }
  }

  /// The chunks of `text` and `bitmaps` (one for each marker, in order),
  /// which stay the caller's.
  private func tokenize(
    _ text: String, bitmaps: [OpaquePointer?], addSpecial: Bool, parseSpecial: Bool
  ) throws(HybridInferenceError) -> MediaChunks {
    let table = library.table
    guard let chunks = CHybridMTMD_chunks_new(table) else {
      throw .generationFailed("libmtmd could not allocate a prompt's chunks")
    }
    let errors = MTMDErrorLines()
    let result = MTMDErrorLines.$collecting.withValue(errors) {
      text.utf8CString.withUnsafeBufferPointer { utf8 in
        bitmaps.withUnsafeBufferPointer { list in
          // utf8 ends with its NUL, which is not the text's.
          CHybridMTMD_tokenize(
            table, context, chunks, utf8.baseAddress, utf8.count - 1, addSpecial, parseSpecial, list.baseAddress,
            list.count)
        }
      }
    }
    guard result == 0 else {
      CHybridMTMD_chunks_free(table, chunks)
      throw .unsupportedRequest("libmtmd could not prepare the prompt's images: \(errors.summary ?? "code \(result)")")
    }
    return MediaChunks(projector: self, pointer: chunks)
  }
}

extension Projector {
  /// Decodes `chunks`, from the chunk `first` on (those before are in the
  /// sequence already), into `sequence` of the llama.cpp context
  /// `llamaContext` from `position`, at most `batchSize` tokens a decode,
  /// encoding each image on the way; returns the position after the last.
  /// With `logitsLast`, the last token's logits are kept for sampling.
  ///
  /// The caller holds the llama.cpp context for the call; the projector's
  /// encoder is held here (`encoding`), for callers of other contexts.
  func evaluate(
    _ chunks: MediaChunks, fromChunk first: Int = 0, into llamaContext: OpaquePointer, sequence: Int32,
    from position: Int32, batchSize: Int32, logitsLast: Bool = true
  ) throws(HybridInferenceError) -> Int32 {
    var next: Int32 = 0
    let errors = MTMDErrorLines()
    encoding.lock()
    defer { encoding.unlock() }
    let result = MTMDErrorLines.$collecting.withValue(errors) {
      CHybridMTMD_evaluate_from(
        library.table, context, llamaContext, chunks.pointer, max(0, first), position, sequence, batchSize,
        logitsLast, &next)
    }
    encodedImages.add(chunks.layout.images.count { $0.chunk >= first }, ordering: .relaxed)
    guard result == 0 else {
      throw .generationFailed("libmtmd could not evaluate the prompt's chunks: \(errors.summary ?? "code \(result)")")
    }
    return next
  }
}
