import CLlama
import HybridInferenceCore
import HybridInferenceJinja

/// What one sequence of a batched context holds in the shared KV cache: the
/// tokens, in order, and how many of them another session may reuse.
///
/// A value kept by the context's scheduler, changed only between decode steps.
struct SequenceCache {
  let id: llama_seq_id
  /// The tokens whose keys and values the cache holds for this sequence.
  private(set) var tokens: [llama_token] = []
  /// How many leading tokens hold nothing a session said (the template's
  /// opening, the instructions), which another session whose prompt starts
  /// the same may reuse; the rest is private.
  var shareablePrefix = 0
  /// The images among `tokens` (each of its positions holds
  /// `BatchedContext.mediaToken`), in order: a later turn keeps one only
  /// when its prompt has the same image in the same positions.
  private(set) var images: [MediaLayout.Image] = []

  init(id: llama_seq_id) {
    self.id = id
  }

  /// Records tokens a decode step has just added.
  mutating func append(_ added: some Collection<llama_token>) {
    tokens.append(contentsOf: added)
  }

  /// Records that the sequence holds `layout`'s images, those within its tokens.
  mutating func holds(_ layout: MediaLayout) {
    images = layout.images.filter { $0.start + $0.count <= tokens.count }
  }

  /// Keeps the first `count` tokens and drops the rest from the cache.
  mutating func keep(prefix count: Int, in memory: llama_memory_t) {
    guard count < tokens.count else { return }
    guard llama_memory_seq_rm(memory, id, llama_pos(count), -1) else {
      clear(memory)
      return
    }
    tokens.removeSubrange(count...)
    shareablePrefix = min(shareablePrefix, count)
    images.removeAll { $0.start + $0.count > count }
  }

  /// Records a state llama.cpp has just read into the sequence from the
  /// prompt cache: `loaded`, a prefix of the prompt, of which the first
  /// `shareable` tokens may be reused by another session.
  mutating func loaded(_ loaded: ArraySlice<llama_token>, shareable: Int) {
    tokens = Array(loaded)
    shareablePrefix = min(shareable, loaded.count)
    images = []
  }

  /// Drops whatever a failed or aborted step left after the known tokens.
  mutating func dropUnrecorded(in memory: llama_memory_t) {
    if !llama_memory_seq_rm(memory, id, llama_pos(tokens.count), -1) { clear(memory) }
  }

  /// Empties the sequence: the known state after a removal llama.cpp refused.
  mutating func clear(_ memory: llama_memory_t) {
    _ = llama_memory_seq_rm(memory, id, -1, -1)
    tokens.removeAll()
    shareablePrefix = 0
    images = []
  }

  /// A sequence from another session keeps its shareable prefix when this
  /// prompt starts with all of it, and nothing otherwise: even a partial
  /// match would tell one session something about another's prompt.
  mutating func keepInstructions(ifSharedWith prompt: [llama_token], in memory: llama_memory_t) {
    let instructions = tokens.prefix(shareablePrefix)
    let matches = instructions.count < prompt.count && zip(instructions, prompt).allSatisfy { $0 == $1 }
    keep(prefix: matches ? shareablePrefix : 0, in: memory)
  }

  /// Keeps the longest prefix the cache shares with `prompt` and drops the
  /// rest; returns how many tokens are reused. At least one prompt token is
  /// always decoded again, because sampling needs fresh logits.
  ///
  /// An image is kept only whole, and only when `promptImages` has the same
  /// one in its place (`MediaLayout.Image.isSame`): its positions hold the
  /// same placeholder token whatever the image. A text prompt (no images)
  /// never holds that token, so it keeps at most what comes before the first.
  mutating func keepCachedPrefix(
    of prompt: [llama_token], images promptImages: [MediaLayout.Image] = [], in memory: llama_memory_t
  ) -> Int {
    let limit = min(tokens.count, prompt.count - 1)
    var shared = zip(tokens.prefix(limit), prompt).prefix { $0 == $1 }.count
    for image in images where image.start < shared {
      let kept = image.start + image.count <= shared && promptImages.contains { image.isSame(as: $0) }
      if !kept {
        shared = image.start
        break
      }
    }
    keep(prefix: shared, in: memory)
    return tokens.count
  }
}
