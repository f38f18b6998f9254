import CLlama
import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// How a `BatchedContext` goes from one sequence to `sequences`.
///
/// Why grow instead of making every sequence up front: llama.cpp allocates
/// and clears a context's whole KV cache when it makes the context, so four
/// sequences of 4,096 tokens cost SmolLM2 360 MiB of resident memory even in
/// an app that only ever runs one session at a time. A context starts with
/// one sequence; the first time more turns wait than there are idle
/// sequences, the scheduler makes a context with all of them instead,
/// between two steps.
///
/// The cells cannot be moved across: llama.cpp saves a sequence's state with
/// its context's stream count and refuses it in a context with another count
/// ("n_stream mismatch"). So a running turn's tokens are decoded again in the
/// new context before it goes on (one prefill, once in the life of the
/// context), and idle sequences' caches are dropped: their sessions prefill
/// their next turn in full, once. Not while a turn holding images answers
/// (its image embeddings cannot be decoded again from tokens): the turns
/// queued then wait for it.
///
/// The swap holds `creation`, the lock that guards `pointer`, from the old
/// context's free to the new one's store: `prepare()` may ask for the
/// context (`created()`) from another thread at any time, and must neither
/// be handed the freed pointer nor make a context of its own meanwhile (which
/// the swap would then overwrite and leak). It waits instead, and gets the
/// grown one. No test can stop a thread between two statements, so this is
/// held by construction: every read and write of `pointer` is under
/// `creation`.
extension BatchedContext {
  /// Grows to `settings.sequences` when more turns wait than there are idle
  /// sequences. Returns true when the context was made again (grown, or at
  /// its old size when llama.cpp could not make the larger one).
  func growIfWaiting() -> Bool {
    guard !growthFailed, caches.count < settings.sequences else { return false }
    // A turn holding images could not decode them again in the new context:
    // the turns queued behind it wait for it instead.
    guard !active.contains(where: { $0.request.media != nil }) else { return false }
    let crowded = state.withLock { $0.queue.count > $0.slots.idleCount }
    guard crowded else { return false }
    let count = creation.withLock { () -> Int? in
      guard let old = pointer else { return nil }
      for turn in active {
        turn.unDecoded = ArraySlice(caches[turn.sequence].tokens) + turn.unDecoded
      }
      // The old context goes first, so that peak memory is the new one alone.
      llama_free(old)
      pointer = nil
      do {
        pointer = try makeContext(sequences: settings.sequences)
        return settings.sequences
      } catch {
        growthFailed = true
        pointer = try? makeContext(sequences: caches.count)  // nil: the scheduler fails its turns
        return caches.count
      }
    }
    guard let count else { return false }
    caches = (0..<count).map { SequenceCache(id: llama_seq_id($0)) }
    state.withLock { $0.slots.grow(to: count) }
    return true
  }
}
