import CHybridMTMD
import CLlama
import HybridInferenceCore

/// What a media prompt puts in its sequence, position by position: what a
/// later turn of the session compares to keep those cells instead of
/// encoding its images again.
///
/// Text is compared token by token; an image by its id (the SHA-256 of the
/// file's bytes, which libmtmd's decoder gives its bitmap) and the positions
/// it takes, since its embeddings do not come from tokens.
struct MediaLayout: Sendable, Equatable {
  /// One image's place in a sequence.
  struct Image: Sendable, Equatable {
    /// The image's chunk in its prompt.
    var chunk: Int
    /// Its first position, and how many it takes.
    var start: Int
    var count: Int
    /// Its bitmap's id; nil for one made without, which is never reused.
    var id: String?

    /// Whether `other` puts the same image in the same positions.
    func isSame(as other: Image) -> Bool {
      id != nil && id == other.id && start == other.start && count == other.count
    }
  }

  /// One token a position: a text chunk's own tokens, and
  /// `BatchedContext.mediaToken` for each position an image takes.
  var tokens: [llama_token] = []
  /// The images, in order.
  var images: [Image] = []
  /// The position each chunk starts at, ascending.
  var chunkStarts: [Int] = []

  /// The chunk that holds position `position`: the last one starting at or
  /// before it (the count of chunks when the layout is empty).
  func chunk(holding position: Int) -> Int {
    chunkStarts.lastIndex { $0 <= position } ?? 0
  }

  /// Whether any chunk from `chunk` on is an image.
  func hasImages(from chunk: Int) -> Bool {
    images.contains { $0.chunk >= chunk }
  }
}

extension MediaLayout {
  /// The layout of libmtmd's `chunks` (`count` of them), read chunk by chunk.
  /// An image takes its positions (`mtmd_input_chunk_get_n_pos`), text its tokens.
  init(chunks: OpaquePointer, count: Int, table: OpaquePointer) {
    for index in 0..<count {
      chunkStarts.append(tokens.count)
      var length = 0
      if let text = CHybridMTMD_chunk_text(table, chunks, index, &length) {
        tokens.append(contentsOf: UnsafeBufferPointer(start: text, count: length))
        continue
      }
      let positions = Int(max(0, CHybridMTMD_chunk_positions(table, chunks, index)))
      let id = CHybridMTMD_chunk_id(table, chunks, index).map { String(cString: $0) }
      images.append(Image(chunk: index, start: tokens.count, count: positions, id: id))
      tokens.append(contentsOf: repeatElement(BatchedContext.mediaToken, count: positions))
    }
  }
}
