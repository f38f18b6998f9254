import CLlama
import HybridInferenceCore
import HybridInferenceJinja
import Synchronization

/// One turn to generate, prepared by the request's task: the prompt's tokens
/// and how to sample the answer.
struct GenerationRequest: Sendable {
  /// The rendered conversation, tokenized.
  var prompt: [llama_token]
  /// How many leading prompt tokens hold nothing the session said (the
  /// template's opening, the instructions): the part a sequence may keep for
  /// another session whose prompt starts the same (`shareablePrefix`).
  var shareableTokens: Int
  /// The session asking, which owns the sequence it is given.
  var owner: ObjectIdentifier
  /// The caller's limit on the answer, if any.
  var maximumResponseTokens: Int?
  var sampler: @Sendable () throws -> SamplerChain
  /// True when a grammar constrains the answer to one JSON value: generation
  /// stops as soon as that value is complete, without waiting for an end token.
  var stopsAtCompleteJSON = false
  /// Called on the compute lane with the answer's text, in order: each
  /// token's while the turn answers alone, a few tokens' at a time while
  /// several do (`BatchScheduler.deliverText`).
  var onText: @Sendable (String) -> Void
  /// How the answer's thought block reads, when the template thinks: the
  /// scheduler follows it token by token to count the thought tokens.
  var thoughts: ThoughtSplitter?
  /// When set, the block is closed once the answer has spent this many
  /// thought tokens (`ThoughtBudget`).
  var thoughtBudget: ThoughtBudget?
  /// Control tokens whose text the answer shows (the call syntax's markers).
  var shownControlTokens: Set<llama_token> = []
  /// Where the prompt cache's messages go.
  var log: LogHandler = .silent
  /// The states this request saves to the prompt cache, when the model has one.
  var cacheWrites: PromptCacheWrites?
  /// The prompt as libmtmd's chunks, when it holds images: then `prompt` is
  /// their layout's tokens (`MediaLayout.tokens`: the text's own, and
  /// `BatchedContext.mediaToken` for each image position), and the
  /// scheduler prefills the chunks instead (`prefillMedia`).
  var media: MediaChunks?
}

/// What one generation did.
struct GenerationOutcome: Sendable {
  var promptTokens: Int
  /// Prompt tokens already in the KV cache, which were not decoded again.
  var reusedTokens: Int
  var generatedTokens: Int
  /// The generated tokens from the one that opens the thought block through
  /// the one that closes it (all of them when the prompt opened it); 0 when
  /// the template does not think.
  var thoughtTokens: Int
  var finishReason: FinishReason
}

/// A request's turn on one sequence of a `BatchedContext`, from the queue to
/// its outcome.
///
/// `@unchecked Sendable` with a written reason: after `submit` hands it to the
/// context, everything but `flag` is read and written by the context's
/// scheduler alone (one step at a time on one compute lane), and the
/// continuation is resumed exactly once, by whoever takes the turn out of the
/// queue or the active set under the context's lock.
final class SequenceTurn: @unchecked Sendable {
  let request: GenerationRequest
  /// Set from any thread when the caller's task is cancelled.
  let flag = CancellationFlag()
  var continuation: CheckedContinuation<GenerationOutcome, any Error>?

  /// The sequence it was given at admission.
  var sequence = 0
  var sampler: SamplerChain?
  /// The tokens to decode next, in order: the prompt after what the cache
  /// reused, then each sampled token (or, after the context grew, everything
  /// the sequence held, decoded again into the new context).
  var unDecoded: ArraySlice<llama_token> = []
  /// True once the whole prompt is in the cache (its first logits sampled).
  var answering = false
  var reusedTokens = 0
  /// Token counts at which the sequence's state goes to the prompt cache
  /// (the shareable opening, the whole prompt), ascending.
  var savePoints: [Int] = []
  /// The save point that is the prompt's shareable opening, if planned.
  var shareablePoint: Int?
  var generatedTokens = 0
  /// Follows the answer's thought block, one token at a time.
  var thoughtCounter: ThoughtSplitter?
  var thoughtTokens = 0
  /// Whether the budget's end tag went in: it goes in once.
  private var closedThought = false
  /// Where this turn's logits are in the batch just decoded, if it asked for any.
  var logitsIndex: Int32?
  var decoder = UTF8StreamDecoder()
  var tracker = JSONCompletionTracker()
  /// Answer text sampled but not yet handed to the caller (`deliver()`).
  private var undelivered = ""

  init(_ request: GenerationRequest) {
    self.request = request
    self.thoughtCounter = request.thoughts
  }

  var prompt: [llama_token] { request.prompt }

  /// The outcome so far, with `reason`.
  func outcome(_ reason: FinishReason) -> GenerationOutcome {
    GenerationOutcome(
      promptTokens: prompt.count, reusedTokens: reusedTokens, generatedTokens: generatedTokens,
      thoughtTokens: thoughtTokens, finishReason: reason)
  }

  /// Takes the token sampled from this turn's logits. Returns the finish
  /// reason when the answer is complete, nil when the token goes on to the
  /// next step.
  func accept(_ token: llama_token, model: LlamaModel) -> FinishReason? {
    if model.isEndOfGeneration(token) { return .stop }
    generatedTokens += 1
    let text = decoder.decode(model.piece(of: token, special: request.shownControlTokens.contains(token)))
    undelivered += text
    countThought(text)
    if request.stopsAtCompleteJSON, tracker.feed(text) { return .stop }
    unDecoded = [token]
    closeThoughtIfSpent(model: model)
    return nil
  }

  /// Puts the budget's end tag after the token just sampled when the block
  /// has spent its budget: decoded in the next step with it, counted as
  /// generated (and thought) tokens, and handed over as the model's text.
  /// An end tag the caller's token limit has no room for is left out: the
  /// block then runs to the limit and is all thought.
  private func closeThoughtIfSpent(model: LlamaModel) {
    guard let budget = request.thoughtBudget, !closedThought, thoughtCounter?.isThinking == true,
      thoughtTokens >= budget.tokens,
      budget.closing.count < (request.maximumResponseTokens ?? .max) - generatedTokens
    else { return }
    closedThought = true
    for token in budget.closing {
      generatedTokens += 1
      let text = decoder.decode(model.piece(of: token))
      undelivered += text
      countThought(text)
    }
    unDecoded.append(contentsOf: budget.closing)
  }

  /// Counts the token whose text is `text` as thought when the block was open
  /// before it or is open after it (the tags' own tokens included).
  private func countThought(_ text: String) {
    guard let before = thoughtCounter?.isThinking else { return }
    _ = thoughtCounter?.feed(text)
    if before || thoughtCounter?.isThinking == true { thoughtTokens += 1 }
  }

  /// Hands the text sampled since the last delivery to the caller.
  func deliver() {
    guard !undelivered.isEmpty else { return }
    request.onText(undelivered)
    undelivered = ""
  }

  /// Hands over the rest at the end, with the text held back for an
  /// unfinished character.
  func flushText() {
    undelivered += decoder.finish()
    deliver()
  }
}

/// One request's "stop now", set from any thread and read by the scheduler.
final class CancellationFlag: Sendable {
  private let value = Atomic<Bool>(false)

  var isSet: Bool { value.load(ordering: .relaxed) }

  func set() { value.store(true, ordering: .relaxed) }
}
